// Must typecheck: a reconcile's context, its cache reads and its `watches` maps are typed by
// their tokens (each map by its own resource's, not `any`), built-in selectors by their kind.
import { Registry, resource, type ConfigMap, type KubeObject, type ObjectKey, type Secret } from "kobun";
import { assertType, Defined, Examples, type Equal, type KobunExample } from "./example.ts";

const { on } = new Registry();

on.reconcile(Examples, async (ctx) => {
  assertType<Equal<typeof ctx.body, KobunExample>>();
  const size: number = ctx.spec.size;
  ctx.patch.status.greeting = ctx.deleting ? null : `×${size}`;
  const config = ctx.cache.get("configmaps", `${ctx.name}-config`);
  assertType<Equal<typeof config, ConfigMap | undefined>>();
  const secrets = ctx.cache.list(resource.secrets, { labelSelector: "app=x" });
  assertType<Equal<typeof secrets, Secret[]>>();
  const others = ctx.cache.list(Defined, { namespace: null });
  const modes: ("full" | "delta")[] = others.map((o) => o.spec.mode);
  const patched = await ctx.api.patch("configmaps", `${ctx.name}-config`, { data: { size: String(size) } });
  assertType<Equal<typeof patched, ConfigMap>>();
  return ctx.retry > 3 || modes.length === 0 ? { requeueAfter: 60 } : undefined;
}, {
  owns: [resource.configmaps],
  watches: [
    { resource: resource.secrets, map: (secret): ObjectKey | null => {
      assertType<Equal<typeof secret, Secret>>();
      return secret.metadata.labels?.app ? { name: secret.metadata.labels.app } : null;
    } },
    { resource: Defined, map: (defined, { cache }) => {
      const mode: "full" | "delta" = defined.spec.mode;
      return cache.list(Examples).filter((e) => e.spec.field === mode).map((e) => ({ name: e.metadata.name! }));
    } },
    { resource: "configmaps", map: (cm) => ({ name: Object.keys(cm.data ?? {})[0] ?? "none" }) },
    { resource: "widgets.example.com", map: (widget) => {
      assertType<Equal<typeof widget, KubeObject>>();
      return [];
    } },
  ],
});
