"""Long-running tool jobs: started at once, run in the background, survive a restart.

Owns the job runner and its store (``runner``) and what every job tool shares (``bodies``:
starting a job from a tool handler, describing one to the user). The scenario-specific job
bodies live with their scenarios. May import ``tools`` (errors, the tool context), the
packages below it (``observability``, ``security``, ``storage``, ``config``); never ``state``,
a node or the graph.
"""
