// How run() makes its client: from the kubeconfig (or the pod's service account), or from the
// on.login handlers' credentials when there are any; then one cheap request proves the server
// answers and accepts them. Every failure is a FatalError with the README's exit code.

import type { Settings } from "../config/index.ts";
import { KubeClient } from "../kube/index.ts";
import { KubeconfigError, type Connection } from "../kube/index.ts";
import { ApiError } from "../kube/index.ts";
import { LoginError, loginConnection, type Login } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import { FatalError } from "./exits.ts";

/** The operator's own client; `login`: the on.login handlers as one (activities/), replacing the kubeconfig. */
export async function connectClient(
  settings: Settings, logger: Logger, signal: AbortSignal, login: Login | undefined,
): Promise<KubeClient> {
  let client: KubeClient | undefined;
  const options = { requestTimeoutMs: settings.kube.requestTimeout * 1000, http1: settings.kube.http1, logger };
  try {
    client = login
      ? new KubeClient(await loggedIn(login, signal, logger), options)
      : await KubeClient.connect({
        ...(settings.kube.kubeconfig ? { kubeconfig: settings.kube.kubeconfig } : { useDefaults: true }),
        ...(settings.kube.context ? { context: settings.kube.context } : {}),
        ...options,
      });
    // One cheap request proves the server answers and accepts our credentials.
    await client.request("GET", "/version", { signal });
    return client;
  } catch (error) {
    client?.close();
    if (signal.aborted || error instanceof FatalError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    if (error instanceof ApiError && (error.code === 401 || error.code === 403)) {
      const how = login ? " with the credentials from on.login" : "";
      throw new FatalError("connect", `cannot authenticate to the API server${how}: ${reason}`, { cause: error });
    }
    throw new FatalError("connect", `cannot connect to the API server: ${reason}`, { cause: error });
  }
}

/** The first login: a handler that fails, or credentials that make no connection, stop the start (exit 6). */
async function loggedIn(login: Login, signal: AbortSignal, logger: Logger): Promise<Connection> {
  try {
    return await loginConnection(login, logger);
  } catch (error) {
    if (signal.aborted || !(error instanceof LoginError || error instanceof KubeconfigError)) throw error;
    const message = error instanceof LoginError
      ? error.message
      : `on.login returned unusable credentials: ${error.message}`;
    throw new FatalError("startup", message, { cause: error });
  }
}
