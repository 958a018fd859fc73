package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/konverge/konverge/cluster/kube"
)

// The version konverge reports: the kubectl whose commands, flags and
// output it reproduces, the kustomize it builds -k with
// (sigs.k8s.io/kustomize/api v0.21.1, which kustomize v5.8.1 and kubectl
// v1.37.1 ship), and the Kubernetes version the embedded cluster serves.
const (
	kubectlVersion     = "v1.37.1"
	kustomizeVersion   = "v5.8.1"
	embeddedAPIVersion = "v1.37.1"
)

// versionInfo is a version as kubectl prints it: apimachinery's
// version.Info. konverge fills the fields kubectl's client version has
// and copies the same ones of a server's.
type versionInfo = version.Info

type versionOutput struct {
	ClientVersion    *versionInfo `json:"clientVersion,omitempty"`
	KustomizeVersion string       `json:"kustomizeVersion,omitempty"`
	ServerVersion    *versionInfo `json:"serverVersion,omitempty"`
}

// clientVersion is what konverge says of itself: kubectl's version and
// this build's Go.
func clientVersion() *versionInfo {
	major, minor, _ := strings.Cut(strings.TrimPrefix(kubectlVersion, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	return &versionInfo{Major: major, Minor: minor, GitVersion: kubectlVersion, GitCommit: "$Format:%H$",
		GitTreeState: "clean", BuildDate: "1970-01-01T00:00:00Z", GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

func newVersionCmd(g *Globals) *cobra.Command {
	var client bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the versions of konverge and of the cluster",
		Long: `Print two versions for the current context: the
kubectl version whose commands konverge reproduces, and the version of the cluster
(the embedded cluster serves Kubernetes ` + embeddedAPIVersion + `).`,
		Example: "  # Both versions\n  konverge version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if output != "" && output != "yaml" && output != "json" {
				return failOne(g.ErrOut, fmt.Errorf("--output must be 'yaml' or 'json'"))
			}
			v := versionOutput{ClientVersion: clientVersion(), KustomizeVersion: kustomizeVersion}
			var serverErr error
			if !client {
				v.ServerVersion, serverErr = g.serverVersion(cmd)
			}
			switch output {
			case "":
				fmt.Fprintf(g.Out, "Client Version: %s\n", v.ClientVersion.GitVersion)
				fmt.Fprintf(g.Out, "Kustomize Version: %s\n", v.KustomizeVersion)
				if v.ServerVersion != nil {
					fmt.Fprintf(g.Out, "Server Version: %s\n", v.ServerVersion.GitVersion)
				}
			case "json":
				b, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				fmt.Fprintln(g.Out, string(b))
			case "yaml":
				b, err := yaml.Marshal(v)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				fmt.Fprint(g.Out, string(b))
			}
			if serverErr != nil {
				return failOne(g.ErrOut, serverErr)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&client, "client", false, "Print only the client's version, without asking a cluster.")
	cmd.Flags().StringVarP(&output, "output", "o", "", "Print as yaml or json.")
	return cmd
}

// serverVersion asks a real cluster for its version; the embedded
// cluster's is konverge's Kubernetes version.
func (g *Globals) serverVersion(cmd *cobra.Command) (*versionInfo, error) {
	if g.Kubeconfig == "" && g.Context == "" {
		v := clientVersion()
		v.GitVersion = embeddedAPIVersion
		v.GoVersion = runtime.Version()
		return v, nil
	}
	cfg, err := kube.RESTConfig(g.Kubeconfig, g.Context)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		return nil, err
	}
	return &versionInfo{Major: sv.Major, Minor: sv.Minor, GitVersion: sv.GitVersion, GitCommit: sv.GitCommit,
		GitTreeState: sv.GitTreeState, BuildDate: sv.BuildDate, GoVersion: sv.GoVersion, Compiler: sv.Compiler, Platform: sv.Platform}, nil
}

// newAPIVersionsCmd is kubectl api-versions: every group/version the
// cluster serves, sorted.
func newAPIVersionsCmd(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:     "api-versions",
		Short:   "List the group/versions the cluster serves",
		Example: "  # Print the supported API versions\n  konverge api-versions",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			ctx := cmd.Context()
			seen := map[string]bool{}
			if g.Kubeconfig != "" || g.Context != "" {
				cfg, err := kube.RESTConfig(g.Kubeconfig, g.Context)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				dc, err := discovery.NewDiscoveryClientForConfig(cfg)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				groups, err := dc.ServerGroups()
				if err != nil {
					return failOne(g.ErrOut, fmt.Errorf("couldn't get available api versions from server: %v", err))
				}
				for _, gr := range groups.Groups {
					for _, v := range gr.Versions {
						seen[v.GroupVersion] = true
					}
				}
			} else {
				sess, err := g.openResourceSession(ctx)
				if err != nil {
					return failOne(g.ErrOut, err)
				}
				for _, r := range sess.Mapper().Resources() {
					seen[r.GVK.APIVersion()] = true
				}
				for _, gv := range resourcelessGroupVersions {
					seen[gv] = true
				}
				if err := sess.Close(ctx); err != nil {
					return failOne(g.ErrOut, err)
				}
			}
			out := make([]string, 0, len(seen))
			for gv := range seen {
				out = append(out, gv)
			}
			sort.Strings(out)
			for _, gv := range out {
				fmt.Fprintln(g.Out, gv)
			}
			return nil
		},
	}
}

// resourcelessGroupVersions are served by kube-apiserver for requests that
// store nothing (reviews), which the embedded cluster does not list as
// resources.
var resourcelessGroupVersions = []string{"authentication.k8s.io/v1", "authorization.k8s.io/v1"}
