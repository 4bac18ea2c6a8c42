"""The run path: plans, the worker harness, jobs, hosted-mode caps. (Not ``rnnlab.run``: that name
is the public ``run`` function.)"""
