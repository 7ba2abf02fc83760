# The Kopf peer of bench/real.ts: handlers equivalent to handlers/example.ts (create, update,
# delete, so a finalizer), run as `kopf run --standalone --quiet -n NS kopf_example.py`
# with Kopf's default settings (it posts Events, as kobun does).
import kopf


@kopf.on.create("kobun.dev", "v1", "kobunexamples")
async def create_fn(name, patch, logger, **_):
    logger.info(f"creating {name}")
    patch.status["greeting"] = f"hello {name}"
    return {"message": f"hello {name}"}


@kopf.on.update("kobun.dev", "v1", "kobunexamples")
async def update_fn(diff, logger, **_):
    changed = [".".join(d[1]) for d in diff]
    logger.info(f"changed {changed}")
    return {"changed": changed}


@kopf.on.delete("kobun.dev", "v1", "kobunexamples")
async def delete_fn(name, namespace, logger, **_):
    logger.info(f"deleting {namespace}/{name}")
