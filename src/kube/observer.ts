// What kube/ tells an observer about its requests, without knowing who listens: runtime/
// wires the metrics in (observability/ is a side room this one may not import). The shape
// follows client-go's tools/metrics hooks, so rest_client_* can carry client-go's names.

export interface RequestObserver {
  /**
   * One attempt ended: `code` is the HTTP status, or "<error>" when no answer came (as
   * client-go says it); `seconds` from sending to the answer's headers and body (a watch:
   * to its headers). Retries are attempts of their own.
   */
  requested(method: string, host: string, code: string, seconds: number): void;
}
