// Logging in with credentials of your own instead of the kubeconfig's (or the pod's service
// account): here a token that something else keeps fresh in files, such as a Vault agent
// sidecar or a CSI secrets driver writing into /var/run/secrets/operator.
//
// The example is commented out, so that the example operator keeps using its kubeconfig or its
// service account: uncomment the code below to try it. test/examples/login-example.test.ts runs
// it uncommented, against the sandbox, so it cannot rot.
//
// kobun asks on.login before anything connects (before on.startup, before any watch), and again
// when the API server answers 401 (the token was rotated or revoked): all the requests refused
// at that moment wait for one login, then go on with what it returned. A login that throws, or
// returns nothing, stops the operator at start-up with exit code 6. kobun never logs what a
// login returns.
//
//   mkdir -p /var/run/secrets/operator && cd /var/run/secrets/operator
//   kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}' > server
//   kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d > ca.crt
//   kubectl create token kobun-operator -n kobun-system > token
//   kobun run        # with handlers/login.ts uncommented and built in

// import { existsSync, readFileSync } from "node:fs";
// import { join } from "node:path";
// import { on } from "kobun";
//
// const DIR = "/var/run/secrets/operator";
//
// // Return { server, ca, token } (or { server, ca, clientCertificate, clientKey }; or
// // { kubeconfig: path }, { kubeconfigText }, or a @kubernetes/client-node KubeConfig). Return
// // nothing to leave it to the next login handler. `renewal` is true when the API server refused
// // what the last call returned; `expiresAt` in the result makes kobun ask again before then.
// on.login(({ renewal, logger }) => {
//   if (renewal) logger.info("the API server refused the token: reading it again");
//   const read = (file: string) => readFileSync(join(DIR, file), "utf8");
//   return {
//     server: read("server").trim(),
//     ...(existsSync(join(DIR, "ca.crt")) ? { ca: read("ca.crt") } : {}),
//     token: read("token").trim(),
//   };
// }, { id: "mounted-token" });
