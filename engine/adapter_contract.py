"""What the worker process and the adapters it loads agree on. The adapters run inside the
worker, which loads them through the ``--impl`` loader, so neither may import the other: what
crosses between them lives here, and this module imports nothing of the engine."""

# The environment variable that names a worker's folder of the compile cache: the worker sets it
# while it loads the implementation (engine.worker.compile_cache_at), an adapter reads it
# (engine.adapters.compile_cache.from_environment).
COMPILE_CACHE_ENV = "ARGMIN_COMPILE_CACHE"


class NotPackable(Exception):
    """The adapter cannot answer a packed model (a ``model:`` plug-in whose callable returns one
    output only): its calls are made one by one."""
