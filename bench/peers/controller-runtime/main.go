// The controller-runtime peer of bench/real.ts: the example operator's three handlers
// (create, update, delete with a finalizer) on KobunExample objects, unstructured, 100 workers.
// Per object it does what kobun does: a finalizer PATCH, then one /status PATCH carrying the
// result and the last-handled configuration (its diff base). Kubeconfig from --kubeconfig only (peer/peer.go).
package main

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"kobun.dev/bench/controller-runtime/peer"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const finalizer = "kobun.dev/finalizer"

var gvk = schema.GroupVersionKind{Group: "kobun.dev", Version: "v1", Kind: "KobunExample"}

type reconciler struct{ client.Client }

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		if controllerutil.ContainsFinalizer(obj, finalizer) { // delete_fn: nothing but release
			controllerutil.RemoveFinalizer(obj, finalizer)
			return ctrl.Result{}, client.IgnoreNotFound(r.Update(ctx, obj))
		}
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(obj, finalizer)
		if err := r.Patch(ctx, obj, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	spec, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec")
	essence, _ := json.Marshal(map[string]any{"spec": spec})
	last, _, _ := unstructured.NestedString(obj.Object, "status", "kobun", "lastHandledConfiguration")
	if last == string(essence) {
		return ctrl.Result{}, nil
	}
	status := map[string]any{"kobun": map[string]any{"lastHandledConfiguration": string(essence)}}
	if last == "" { // create_fn
		status["greeting"] = "hello " + obj.GetName()
		status["create_fn"] = map[string]any{"message": "hello " + obj.GetName()}
	} else { // update_fn
		status["update_fn"] = map[string]any{"changed": []string{"spec"}}
	}
	body, _ := json.Marshal(map[string]any{"status": status})
	return ctrl.Result{}, r.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, body))
}

func main() {
	cfg, namespace := peer.Config()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	peer.Must("manager", err)
	watched := &unstructured.Unstructured{}
	watched.SetGroupVersionKind(gvk)
	err = ctrl.NewControllerManagedBy(mgr).For(watched).
		WithOptions(controller.Options{MaxConcurrentReconciles: 100}).
		Complete(&reconciler{mgr.GetClient()})
	peer.Must("controller", err)
	peer.Must("run", mgr.Start(ctrl.SetupSignalHandler()))
}
