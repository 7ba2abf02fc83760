// The controller-runtime peer of bench/reconcile.ts: the kobun controller of
// bench/peers/reconcile/handlers/parents.ts in Go. For(BenchParent) with the generation predicate
// (kobun's default trigger), Owns(ConfigMap, Service, Deployment); each reconcile server-side
// applies the three children with a controller owner reference, then merge-patches the
// parent's status (ready, observedGeneration). Typed objects; the cache drops managedFields as
// kobun's does (cache.TransformStripManagedFields). Kubeconfig from --kubeconfig only (peer/peer.go).
package main

import (
	"context"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"kobun.dev/bench/controller-runtime/peer"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

var groupVersion = schema.GroupVersion{Group: "bench.kobun.dev", Version: "v1"}

type ParentSpec struct {
	Replicas int32  `json:"replicas"`
	Image    string `json:"image"`
	Message  string `json:"message"`
}

type ParentStatus struct {
	Ready              bool  `json:"ready,omitempty"`
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

type BenchParent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ParentSpec   `json:"spec"`
	Status            ParentStatus `json:"status,omitempty"`
}

type BenchParentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchParent `json:"items"`
}

// Spec and Status hold no pointers, so a value copy plus the metadata's deep copy is deep.
func (in *BenchParent) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (in *BenchParentList) DeepCopyObject() runtime.Object {
	out := *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]BenchParent, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopyObject().(*BenchParent)
	}
	return &out
}

type reconciler struct{ client.Client }

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	parent := &BenchParent{}
	if err := r.Get(ctx, req.NamespacedName, parent); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	name, namespace := parent.Name, parent.Namespace
	labels := map[string]string{"app": name}
	owner := metav1ac.OwnerReference().WithAPIVersion(groupVersion.String()).WithKind("BenchParent").
		WithName(name).WithUID(parent.UID).WithController(true).WithBlockOwnerDeletion(true)
	config := corev1ac.ConfigMap(name, namespace).WithOwnerReferences(owner).
		WithData(map[string]string{"message": parent.Spec.Message})
	service := corev1ac.Service(name, namespace).WithOwnerReferences(owner).WithSpec(corev1ac.ServiceSpec().
		WithClusterIP("None").WithSelector(labels).
		WithPorts(corev1ac.ServicePort().WithName("http").WithPort(80).WithTargetPort(intstr.FromInt32(8080))))
	deployment := appsv1ac.Deployment(name, namespace).WithOwnerReferences(owner).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(parent.Spec.Replicas).WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().WithContainers(
			corev1ac.Container().WithName("app").WithImage(parent.Spec.Image).
				WithPorts(corev1ac.ContainerPort().WithContainerPort(8080))))))
	for _, child := range []runtime.ApplyConfiguration{config, service, deployment} {
		if err := r.Apply(ctx, child, client.FieldOwner("bench"), client.ForceOwnership); err != nil {
			return ctrl.Result{}, err
		}
	}
	status := map[string]any{"status": ParentStatus{Ready: true, ObservedGeneration: parent.Generation}}
	body, _ := json.Marshal(status)
	return ctrl.Result{}, client.IgnoreNotFound(r.Status().Patch(ctx, parent, client.RawPatch(types.MergePatchType, body)))
}

func main() {
	cfg, namespace := peer.Config()
	scheme := runtime.NewScheme()
	peer.Must("scheme", clientgoscheme.AddToScheme(scheme))
	scheme.AddKnownTypes(groupVersion, &BenchParent{}, &BenchParentList{})
	metav1.AddToGroupVersion(scheme, groupVersion)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Cache: cache.Options{
			DefaultNamespaces: map[string]cache.Config{namespace: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
		},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	peer.Must("manager", err)
	err = ctrl.NewControllerManagedBy(mgr).
		For(&BenchParent{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).Owns(&corev1.Service{}).Owns(&appsv1.Deployment{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 100}).
		Complete(&reconciler{mgr.GetClient()})
	peer.Must("controller", err)
	peer.Must("run", mgr.Start(ctrl.SetupSignalHandler()))
}
