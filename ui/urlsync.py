"""A page's widgets mirrored in its URL, so a copied link opens the same view.

Use it around the page's widgets (each widget created with ``key=prefix + name`` and no ``value=``)::

    sync = UrlSync("unroll.", experiment="unroll", names=CONTROLS, defaults=DEFAULTS,
                   default_variants=BASE, extra_defaults={"ref": "tf1_dynamic"})
    sync.apply()          # before the widgets: a URL that changed from outside sets them (bad values: warnings)
    ... widgets ...
    sync.write(values, variants, extra={"ref": ref})   # after: the URL shows the current settings

Why not ``bind="query-params"``: it drops invalid values silently, and the page must say what it ignored.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import streamlit as st

from rnnlab import experiments
from rnnlab.core import urlstate

from .common import md_escape


class UrlSync:
    def __init__(self, prefix: str, *, experiment: str, names: Sequence[str], defaults: Mapping[str, Any],
                 default_variants: Sequence[str], extra_defaults: Mapping[str, str] | None = None,
                 allowed_variants: Sequence[str] | None = None):
        self.prefix = prefix
        self.experiment = experiment
        self.names = list(names)
        self.defaults = dict(defaults)
        self.default_variants = list(default_variants)
        self.extra_defaults = dict(extra_defaults or {})
        self.allowed_variants = allowed_variants
        self.extra: dict[str, str] = {}  # extra keys from the last applied URL (e.g. "ref"), raw text

    # session keys that are not widgets: they survive page switches
    @property
    def _sig_key(self) -> str:
        return self.prefix + "_url"

    @property
    def _last_key(self) -> str:
        return self.prefix + "_last"

    def key(self, name: str) -> str:
        return self.prefix + name

    def _ours(self, query: Mapping[str, Any]) -> dict[str, str]:
        keys = set(self.names) | {urlstate.VARIANTS_KEY} | set(self.extra_defaults)
        return {k: str(v) for k, v in query.items() if k in keys}

    def set_widgets(self, values: Mapping[str, Any], variants: Sequence[str] | None = None,
                    extra: Mapping[str, str] | None = None) -> None:
        """Put values into the widgets' state (call before they are created, or from a button's on_click)."""
        for n, v in values.items():
            if n in self.names:
                st.session_state[self.key(n)] = v
        if variants is not None:
            st.session_state[self.key(urlstate.VARIANTS_KEY)] = list(variants)
        for k, v in (extra or {}).items():
            st.session_state[self.key(k)] = v

    def apply(self) -> list[str]:
        """Read the URL; if it changed since this page last wrote it (a new tab, a shared link, a page link, a
        hand edit), set the widgets from it. Returns (and shows) the problems: each bad value fell back to its
        default."""
        query = self._ours(st.query_params.to_dict())
        sig = urlstate.encode(query)
        if st.session_state.get(self._sig_key) == sig and all(
                self.key(n) in st.session_state for n in [*self.names, urlstate.VARIANTS_KEY]):
            return []
        last = st.session_state.get(self._last_key)
        if not query and last:
            # back on this page from another one (the URL lost its parameters): restore what the user had
            values, variants, extra = last
            self.set_widgets(values, variants, extra)
            self.extra = dict(extra)
            return []
        d = urlstate.decode(query, experiment=experiments.get(self.experiment), names=self.names, defaults=self.defaults,
                            default_variants=self.default_variants, extra_keys=list(self.extra_defaults),
                            allowed_variants=self.allowed_variants)
        extra = {**self.extra_defaults, **d.extra}
        self.set_widgets(d.values, d.variants, extra)
        self.extra = extra
        if d.problems:
            st.warning("This link holds settings that cannot be used; the defaults replace them:\n"
                       + "\n".join(f"- {md_escape(p.removeprefix('URL: '))}" for p in d.problems), icon=":material/link_off:")
        return d.problems

    def write(self, values: Mapping[str, Any], variants: Sequence[str], extra: Mapping[str, Any] | None = None
              ) -> None:
        """Show the current settings in the URL (and remember them for a return to this page)."""
        encoded = urlstate.encode({n: values[n] for n in self.names if n in values}, variants=list(variants),
                                  extra={k: v for k, v in (extra or {}).items() if v is not None})
        if self._ours(st.query_params.to_dict()) != encoded:
            st.query_params.from_dict(encoded)
        st.session_state[self._sig_key] = encoded
        st.session_state[self._last_key] = (dict(values), list(variants),
                                            {k: str(v) for k, v in (extra or {}).items() if v is not None})
