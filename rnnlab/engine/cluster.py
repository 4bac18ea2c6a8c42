"""A run fanned out on a Ray cluster: the same tasks as a local run, each a Ray task in a fresh process.

``Cluster(address)`` connects (``"local"`` starts a Ray instance on this machine's cores); :func:`run` is
``api.run``'s work on it. Each (point, variant, round) becomes one Ray task (``max_calls=1``: a fresh Ray worker per
measurement) that reserves every CPU (and GPU) of its node, so two measurements never share a node's cores; inside
it, the local harness measures as it does here (``points.measure``: a spawned worker, the same time-out, memory limit
and error messages). All rounds of a point run on one node, so its ratios and the numeric agreement are never
paired across machines; points are dealt to the nodes in turn. Each node's records carry its own environment
(probed on the node), hence its own machine fingerprint and keys.

Records are folded and stored here as their tasks finish (``points.take_round``), progress names the node, and
cancelling (Ctrl-C, the app's cancel) cancels every task not finished. Ray is imported here only, and this module
only when a run asks for a cluster.
"""

from __future__ import annotations

import dataclasses

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from rnnlab import experiments
from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import SEQUENTIAL, device_asked, is_interleaved
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.engine import points
from rnnlab.engine.environment import environment, needs_probe
from rnnlab.engine.plan import Plan
from rnnlab.engine import runner as _runner

LOCAL = "local"  # --cluster local: a Ray instance on this machine, with its cores
_PACKAGE = Path(__file__).resolve().parents[1]  # rnnlab/, shipped to a remote cluster's workers
_ROOT = _PACKAGE.parent
_POLL_S = 0.5
_CANCEL_GRACE_S = 10.0  # how long cancelled tasks get to end their workers before they are killed


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    name: str  # its address, as progress and errors say it
    cpus: float
    gpus: float


def _import_ray(local: bool):
    """Ray, imported with what it reads at import: it reports usage to nobody (its default sends it to a host on the
    internet and asks a cloud metadata address which cloud it runs on), and a local instance takes 127.0.0.1 as its
    node's address (its default is the machine's network address). A variable the user set wins."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # Ray's switch for a node on loopback
    try:
        import ray
    except ImportError as e:  # requirements.txt has it; a trimmed install may not
        raise RnnlabError("--cluster needs Ray: pip install 'ray>=2.40' (see README, 'Running on a Ray cluster')") from e
    return ray


CONNECT_S = 10.0  # how long the head's port may take to answer before --cluster gives up


def reachable(address: str, *, timeout: float = CONNECT_S) -> None:
    """Refuse at once an address nothing listens on (``host:6379`` or ``ray://host:10001``): Ray itself would retry
    for minutes, logging every few seconds. ``auto`` and unparsable addresses are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    host = host.strip("[]")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return
    except socket.gaierror:
        why = f"the host {host} is not known"
    except (socket.timeout, TimeoutError):
        why = f"no answer from {host}:{port} within {timeout:g} s"
    except OSError as e:
        why = f"nothing answers at {host}:{port} ({e.strerror or e})"
    raise RnnlabError(f"--cluster {address}: cannot reach Ray's head: {why}; start it there (ray start --head)"
                      " or check the address")


class Cluster:
    """A connection to a Ray cluster (``address``: ``"local"``, ``"auto"``, or ``ray://host:10001`` / ``host:6379``).
    Use it as a context manager: leaving it disconnects, and shuts down a local instance it started."""

    def __init__(self, address: str, *, num_cpus: int | None = None):
        self.address = address
        self.local = address == LOCAL
        ray = self.ray = _import_ray(self.local)
        quiet = {"logging_level": logging.ERROR, "log_to_driver": False, "include_dashboard": False}
        try:
            if self.local:
                env_vars = {"PYTHONPATH": str(_ROOT)}
                if os.environ.get("RNNLAB_STORE"):
                    env_vars["RNNLAB_STORE"] = os.environ["RNNLAB_STORE"]
                ray.init(num_cpus=num_cpus or os.cpu_count() or 1, object_store_memory=256 * 2**20,
                         runtime_env={"env_vars": env_vars}, **quiet)
            else:  # the nodes need rnnlab's requirements; the package itself travels with the job
                reachable(address)
                ray.init(address=address, runtime_env={"py_modules": [str(_PACKAGE)]}, **quiet)
        except RnnlabError:
            raise
        except Exception as e:  # a wrong address, a cluster of another Ray version, ...
            raise RnnlabError(f"--cluster {address}: cannot connect to Ray: {' '.join(str(e).split())[:200]}") from e
        self.nodes = [Node(n["NodeID"], n.get("NodeManagerAddress") or n["NodeID"][:8],
                           float(n["Resources"]["CPU"]), float(n["Resources"].get("GPU", 0)))
                      for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU")]
        if not self.nodes:
            self.close()
            raise RnnlabError(f"--cluster {address}: the cluster has no live node with CPUs")
        if self.local:  # one machine: say it as this machine's name
            self.nodes = [Node(n.id, socket.gethostname(), n.cpus, n.gpus) for n in self.nodes]
        self._measure, self._environment = _remote_functions(ray)

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, p: Plan, **kw) -> list[Record]:
        """``api.run(p, cluster=self)``: :func:`run` on this cluster."""
        return run(p, self, **kw)

    def close(self) -> None:
        if self.ray.is_initialized():
            self.ray.shutdown()

    def options(self, node: Node) -> dict:
        """A task that has ``node`` to itself: all its CPUs and GPUs, and no other node."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return {"num_cpus": node.cpus, "num_gpus": node.gpus,
                "scheduling_strategy": NodeAffinitySchedulingStrategy(node.id, soft=False)}

    def environment(self, node: Node, requested: str, store: Store | None = None) -> dict:
        """The env block a run on ``node`` records (probed there, cached in the node's own store; a local
        cluster's node is this machine: ``store``'s cached probe)."""
        if self.local:
            return environment(requested, store=store)
        return self.ray.get(self._environment.options(**self.options(node)).remote(requested))

    def submit(self, node: Node, task: dict, *, timeout_s: float, mem_limit_mb: float | None):
        return self._measure.options(**self.options(node)).remote(task, timeout_s, mem_limit_mb)


def _remote_functions(ray):
    """The two functions a node runs, as Ray remote functions (defined once Ray is imported)."""

    @ray.remote(max_calls=1, max_retries=0)
    def measure_on_node(task: dict, timeout_s: float, mem_limit_mb: float | None):
        from rnnlab.core import envinfo
        from rnnlab.engine import points as node

        limit = mem_limit_mb if mem_limit_mb is not None else envinfo.available_mb() * 0.9
        before = node.loadavg()
        msg, raw = node.measure(task, want_outputs=True, timeout_s=timeout_s, limit=limit)
        return msg, raw, (before, node.loadavg())

    @ray.remote(max_calls=1, max_retries=0)
    def environment_on_node(requested: str) -> dict:
        from rnnlab.engine.environment import environment as node_environment

        return node_environment(requested)

    return measure_on_node, environment_on_node


def _failure(e: BaseException, node: Node) -> dict:
    """A Ray task that died (its process killed, its node lost) as the harness's transient error message."""
    text = " ".join(str(e).split())
    return {"type": "error", "transient": True, "reason": f"the Ray task on {node.name} failed: {text[:240]}"}


def run(p: Plan, cluster: Cluster, *, store: Store, fresh: bool = False,
        on_progress: Callable[[_runner.Progress], None] | None = None, cancel: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic, mem_limit_mb: float | None = None,
        env: Mapping[str, Any] | None = None) -> list[Record]:
    """``api.run`` on a cluster: the same records, stored as they finish; in plan order.

    ``env`` (tests): every node's environment, no probe."""
    exp = experiments.get(p.experiment)
    count = points.Counter(p, on_progress, clock)
    if any(is_interleaved(pt) for pt in p.points):
        # one Ray task measures one variant: the records say so (the protocol is part of their key)
        p = dataclasses.replace(p, points=tuple({**pt, "protocol": SEQUENTIAL} if "protocol" in pt else pt
                                                for pt in p.points))
        count.say_run("a cluster measures each variant in a task of its own: protocol=sequential (interleaving "
                      "needs every variant of a point on one node at once)")
    envs: dict[tuple[str, str], dict] = {}
    opened: list[points.OpenPoint] = []
    pending: dict[Any, tuple[points.OpenPoint, str, int, Node]] = {}
    ray = cluster.ray
    try:
        for pi, point in enumerate(p.points):
            node = cluster.nodes[pi % len(cluster.nodes)]
            requested = device_asked(point)
            if (node.id, requested) not in envs:
                if env is None and (not cluster.local or needs_probe(store, requested)):
                    count.say_run(f"reading {node.name}'s environment (TensorFlow's import, a matmul probe)", pi)
                envs[node.id, requested] = dict(env) if env is not None else cluster.environment(node, requested, store)
            pt = points.open_point(store, exp, p, pi, point, envs[node.id, requested], fresh=fresh, count=count,
                                where=node.name)
            opened.append(pt)
            for r, v in pt.schedule():
                task = points.variant_task(exp, v, pt.params, pt.run_env)
                ref = cluster.submit(node, task, timeout_s=pt.params.get("timeout_s", 900), mem_limit_mb=mem_limit_mb)
                pending[ref] = (pt, v, r, node)
        count.say_run(f"{len(pending)} task(s) queued on {len({n for *_, n in pending.values()})} node(s)")
        while pending:
            if cancel is not None and cancel.is_set():
                raise _runner.Cancelled("run cancelled")
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL_S)
            for ref in ready:
                pt, v, r, node = pending.pop(ref)
                try:
                    msg, raw, loads = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a task's death is a record, not the run's end
                    msg, raw, loads = _failure(e, node), None, (None, None)
                points.take_round(store, exp, pt, v, r, msg, raw, loads, count=count)
                if pt.state[v].final:  # decided (all rounds, or a deterministic failure): drop its other rounds
                    for other, (opt, ov, _, _) in list(pending.items()):
                        if opt is pt and ov == v:
                            ray.cancel(other)
                            pending.pop(other)
    except BaseException:  # Ctrl-C, SIGTERM, cancel, a bug: no task of this run outlives it
        _cancel_all(ray, list(pending))
        raise
    out: list[Record] = []
    for pt in opened:
        out.extend(points.close_point(store, exp, pt))
    return out


def _cancel_all(ray, refs: list) -> None:
    """Cancel ``refs``: a running task gets KeyboardInterrupt (its harness kills its worker), a queued one never
    starts; what has not ended after a grace period is killed."""
    for ref in refs:
        ray.cancel(ref)
    t0 = time.monotonic()
    left = list(refs)
    while left and time.monotonic() - t0 < _CANCEL_GRACE_S:
        _, left = ray.wait(left, num_returns=len(left), timeout=0.5)
    for ref in left:
        ray.cancel(ref, force=True)
