// Command etcd is etcd's server binary, built from the go.etcd.io/etcd/server/v3
// version that k8s.io/kubernetes pins (etcd's own main lives in a module that
// isn't meant to be imported, so we wrap etcdmain like etcd's main.go does).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
