// An example with child resources and status conditions: read it after example.ts.
//
// A KobunExample labelled `kobun.dev/example=site` describes a tiny static web site: its
// `spec.content` is the page. The handlers below keep two children in step with it: a
// ConfigMap holding the page and a Deployment that would serve it. Both are owned by the
// KobunExample, so deleting it deletes them too (kube-controller-manager's garbage collector
// does that on a cluster; the sandbox of `kobun dev` does the same).
//
//   kubectl apply -f handlers/kobunexample.crd.yaml
//   kubectl apply -f - <<<'{"apiVersion":"kobun.dev/v1","kind":"KobunExample","metadata":{"name":"home","labels":{"kobun.dev/example":"site"}},"spec":{"content":"<h1>hi</h1>"}}'
//   kubectl get kex home -o jsonpath='{.status.conditions}'   # Ready=True, reason ChildrenApplied
//   kubectl get cm,deploy -l kobun.dev/example=site              # home-content, home-server
//   kubectl delete kex home                                      # and both children go with it
//
// KobunExamples without the label are left to example.ts alone.

import { adopt, ApplyConflictError, conditions, on, TemporaryError, type HandlerContext } from "kobun";

const EXAMPLES = "kobunexamples.kobun.dev/v1";
const SITE = { "kobun.dev/example": "site" };
// What `kobun manifests` must grant for the children: declared once, used on each handler.
const CHILDREN = ["configmaps", "apps/v1/deployments"];

// One function for create and update: it says what the children must be, whatever they are now.
async function applyChildren({ api, body, name, spec, patch, event }: HandlerContext) {
  // adopt(): the owner reference (controller, blockOwnerDeletion), the owner's namespace, and
  // here its labels too, so that `kubectl get -l kobun.dev/example=site` finds the family.
  const page = adopt({
    apiVersion: "v1", kind: "ConfigMap",
    metadata: { name: `${name}-content` },
    data: { "index.html": String(spec.content ?? "<h1>hello</h1>") },
  }, { owner: body, labels: true });
  const server = adopt({
    apiVersion: "apps/v1", kind: "Deployment",
    metadata: { name: `${name}-server` },
    spec: {
      replicas: 1,
      selector: { matchLabels: { "kobun.dev/site": name } },
      template: {
        metadata: { labels: { "kobun.dev/site": name } },
        spec: {
          containers: [{ name: "web", image: "nginx:1.27-alpine", volumeMounts: [{ name: "page", mountPath: "/usr/share/nginx/html" }] }],
          volumes: [{ name: "page", configMap: { name: page.metadata.name } }],
        },
      },
    },
  }, { owner: body, labels: true });

  try {
    // Server-side apply: the operator's field manager owns exactly the fields it sets; running
    // it again changes nothing, and a field it no longer sets is removed.
    await api.apply(page);
    await api.apply(server);
  } catch (error) {
    if (!(error instanceof ApplyConflictError)) throw error;
    // Someone else (kubectl edit, another controller) owns a field we set: say which, and retry
    // later rather than take it over (`api.apply(obj, { force: true })` would).
    conditions.set(patch, { type: "Ready", status: "False", reason: "Conflict", message: error.message }, { object: body });
    event.warn(body, "Conflict", error.message);
    throw new TemporaryError(error.message, { delay: 30 });
  }

  // The whole conditions list goes into the patch; lastTransitionTime changes only when
  // Ready flips, and observedGeneration says which spec this describes.
  conditions.set(patch, { type: "Ready", status: "True", reason: "ChildrenApplied", message: `${page.metadata.name} and ${server.metadata.name} applied` }, { object: body });
  // An Event where `kubectl describe` shows it; repeated ones are counted, not re-posted.
  event.info(body, "ChildrenApplied", `applied ${page.metadata.name} and ${server.metadata.name}`);
  return { configMap: page.metadata.name, deployment: server.metadata.name };
}

on.create(EXAMPLES, applyChildren, { id: "site_children", labels: SITE, children: CHILDREN });
on.update(EXAMPLES, applyChildren, { id: "site_children", labels: SITE, children: CHILDREN });
