// Request bodies that kubectl v1.37.2 (built by test/cluster/build.sh) sent as
// application/vnd.kubernetes.protobuf, captured on the wire; base64. Used by protobuf.test.ts.
export const KUBECTL_PROTOBUF_BODIES = {
  /** kubectl create namespace pb-ns */
  namespace: "azhzAAoPCgJ2MRIJTmFtZXNwYWNlEh0KFQoFcGItbnMSABoAIgAqADIAOABCABIAGgIKABoAIgA=",
  /** kubectl create configmap pb-cm -n pb-ns --from-literal=a=1 */
  configmap: "azhzAAoPCgJ2MRIJQ29uZmlnTWFwEiQKGgoFcGItY20SABoFcGItbnMiACoAMgA4AEIAEgYKAWESATEaACIA",
  /** kubectl create secret generic pb-s -n pb-ns --from-literal=k=v */
  secret: "azhzAAoMCgJ2MRIGU2VjcmV0EiUKGQoEcGItcxIAGgVwYi1ucyIAKgAyADgAQgASBgoBaxIBdhoAGgAiAA==",
  /** kubectl create deployment pb-d -n pb-ns --image=nginx:1 --replicas=0 --port=8080 */
  deployment: "azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50EsQBCiYKBHBiLWQSABoFcGItbnMiACoAMgA4AEIAWgsKA2FwcBIEcGItZBKLAQgAEg0KCwoDYXBwEgRwYi1kGnAKHQoAEgAaACIAKgAyADgAQgBaCwoDYXBwEgRwYi1kEk8SMQoFbmdpbngSB25naW54OjEqADILCgAQABiQPyIAKgBCAGoAcgCAAQCIAQCQAQCiAQAaADIAQgBKAFIAWABgAGgAggEAigEAmgEAwgEAIgIKACgAOAAaDAgAEAAYACAAKAA4ABoAIgA=",
  /** kubectl auth can-i create configmaps -n pb-ns */
  selfSubjectAccessReview: "azhzAAoyChdhdXRob3JpemF0aW9uLms4cy5pby92MRIXU2VsZlN1YmplY3RBY2Nlc3NSZXZpZXcSQwoQCgASABoAIgAqADIAOABCABIlCiMKBXBiLW5zEgZjcmVhdGUaACIAKgpjb25maWdtYXBzMgA6ABoICAASABoAIAAaACIA",
};
