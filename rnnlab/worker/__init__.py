"""The worker side: what runs inside a worker process, apart from the manager that starts it (``rnnlab.engine``).

``python -m rnnlab.worker`` is one worker (``main``): a task in as JSON on stdin, messages out as JSON lines; a
zygote (``zygote``) imports TensorFlow once and forks such workers; ``context`` is what an experiment's worker function
is given (its phases, and ``series``: how a repeated step is timed alone or in the manager's windows); ``machine`` the
environment probe and matmul rate. Nothing here imports the manager, the judges or the views (as pyperf keeps
``_worker`` apart from ``_manager``).
"""
