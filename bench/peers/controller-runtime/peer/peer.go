// Package peer holds what the bench's controller-runtime operators share: their command line
// (--kubeconfig, required, --namespace and --json) and how they fail.
package peer

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// UserAgent is what the operators send: the bench tells their requests apart by it (bench/peers/audit.ts).
const UserAgent = "controller-runtime-bench"

// Config parses the flags and returns the REST config of --kubeconfig, without client-side
// throttling (kobun has none either), and the namespace to watch.
func Config() (*rest.Config, string) {
	// controller-runtime registers --kubeconfig itself; it is required here (no fallbacks).
	namespace := flag.String("namespace", "default", "namespace to watch")
	json := flag.Bool("json", false, "speak JSON to the API server for built-in kinds too (as kobun does), not protobuf")
	flag.Parse()
	kubeconfig := flag.Lookup("kubeconfig").Value.String()
	if kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "--kubeconfig is required")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(2)
	}
	cfg.QPS, cfg.Burst = -1, 0
	if *json { // controller-runtime asks for protobuf for the built-in kinds when ContentType is unset
		cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	}
	cfg.UserAgent = UserAgent
	return cfg, *namespace
}

// Must exits 1, naming what failed, when err is not nil.
func Must(what string, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, what+":", err)
		os.Exit(1)
	}
}
