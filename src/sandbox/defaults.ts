// kube-apiserver's defaulting (SetDefaults_* of k8s.io/kubernetes/pkg/apis/.../v1) for the
// built-in kinds the kubectl suite creates: Deployments (and the pod template they carry) and
// Services. It runs before the field manager, so defaulted fields belong to the writer
// (`kubectl-create` owns spec.template.spec.dnsPolicy, as on the real server). A Service's
// cluster IP is allocated afterwards and owned by nobody, as the real registry does it.

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const dflt = (o: Record<string, any>, k: string, v: unknown) => { if (o[k] === undefined || o[k] === null) o[k] = v; };

/** a tag-less or :latest image is pulled always (SetDefaults_Container) */
function pullPolicy(image: unknown): string {
  const ref = typeof image === "string" ? image.split("@")[0]! : "";
  const tag = ref.lastIndexOf(":") > ref.lastIndexOf("/") ? ref.slice(ref.lastIndexOf(":") + 1) : "";
  return !tag || tag === "latest" ? "Always" : "IfNotPresent";
}

function defaultContainer(c: any): void {
  if (!isObj(c)) return;
  dflt(c, "terminationMessagePath", "/dev/termination-log");
  dflt(c, "terminationMessagePolicy", "File");
  dflt(c, "imagePullPolicy", pullPolicy(c.image));
  dflt(c, "resources", {});
  for (const p of Array.isArray(c.ports) ? c.ports : []) if (isObj(p)) dflt(p, "protocol", "TCP");
}

function defaultPodSpec(spec: any): void {
  if (!isObj(spec)) return;
  dflt(spec, "dnsPolicy", "ClusterFirst");
  dflt(spec, "restartPolicy", "Always");
  dflt(spec, "terminationGracePeriodSeconds", 30);
  dflt(spec, "securityContext", {});
  dflt(spec, "schedulerName", "default-scheduler");
  for (const list of ["containers", "initContainers"]) for (const c of Array.isArray(spec[list]) ? spec[list] : []) defaultContainer(c);
}

function defaultDeployment(d: any): void {
  if (!isObj(d.spec)) return;
  const spec = d.spec;
  dflt(spec, "replicas", 1);
  dflt(spec, "strategy", {});
  dflt(spec.strategy, "type", "RollingUpdate");
  if (spec.strategy.type === "RollingUpdate") {
    dflt(spec.strategy, "rollingUpdate", {});
    dflt(spec.strategy.rollingUpdate, "maxUnavailable", "25%");
    dflt(spec.strategy.rollingUpdate, "maxSurge", "25%");
  }
  dflt(spec, "revisionHistoryLimit", 10);
  dflt(spec, "progressDeadlineSeconds", 600);
  if (isObj(spec.template)) defaultPodSpec(spec.template.spec);
}

function defaultService(svc: any): void {
  if (!isObj(svc.spec)) return;
  const spec = svc.spec;
  dflt(spec, "type", "ClusterIP");
  dflt(spec, "sessionAffinity", "None");
  if (spec.type !== "ExternalName") dflt(spec, "internalTrafficPolicy", "Cluster");
  for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!isObj(p)) continue;
    dflt(p, "protocol", "TCP");
    dflt(p, "targetPort", p.port);
  }
}

/** whether the kind's registry strategy keeps metadata.generation (a Service's does not) */
export function hasGeneration(group: string, plural: string): boolean {
  return !(group === "" && plural === "services");
}

/** the defaults of `body`'s kind, in place */
export function applyDefaults(group: string, plural: string, body: any): void {
  if (group === "apps" && plural === "deployments") defaultDeployment(body);
  else if (group === "" && plural === "services") defaultService(body);
}

/** what a created object gets after the field manager: a Service's cluster IP, empty statuses */
export function allocate(group: string, plural: string, body: any, nextIP: () => string): void {
  if (group === "apps" && plural === "deployments") dflt(body, "status", {});
  if (group !== "" || plural !== "services" || !isObj(body.spec)) return;
  const spec = body.spec;
  if (spec.type !== "ExternalName" && spec.clusterIP === undefined) {
    spec.clusterIP = nextIP();
    spec.clusterIPs = [spec.clusterIP];
  }
  if (spec.clusterIP && spec.clusterIP !== "None") {
    dflt(spec, "clusterIPs", [spec.clusterIP]);
    dflt(spec, "ipFamilies", ["IPv4"]);
    dflt(spec, "ipFamilyPolicy", "SingleStack");
  }
  dflt(body, "status", { loadBalancer: {} });
}
