package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"

	"github.com/konverge/konverge/internal/cli/flags"
	"github.com/konverge/konverge/internal/printer"
)

// newConfigCmd is kubectl config view, get-contexts, current-context and
// use-context, over the kubeconfig konverge reads for --context and
// --kubeconfig: --kubeconfig, else $KUBECONFIG (its files merged), else
// ~/.kube/config, with client-go's loading rules as kubectl has them.
// Reading a kubeconfig does not make the other commands use a real
// cluster; only --kubeconfig or --context does.
func newConfigCmd(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config SUBCOMMAND",
		Short: "Read and change kubeconfig files",
		Long: `Read and change kubeconfig files with the subcommands below, for example
"konverge config use-context staging".

Which files: --kubeconfig names the only one. Without it, $KUBECONFIG is a
list of files (separated as PATH is) merged in order; a change goes to the
file that holds the entry, a new entry to the first file that exists (the
last one of the list when none does). Without either, ~/.kube/config.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprint(g.ErrOut, cmd.UsageString())
			return &ExitError{Code: 1}
		},
	}
	return cmd
}

// configAccess is where the config commands read and write kubeconfigs.
func (g *Globals) configAccess() clientcmd.ConfigAccess {
	po := clientcmd.NewDefaultPathOptions()
	po.LoadingRules.ExplicitPath = g.Kubeconfig
	return po
}

func newConfigViewCmd(g *Globals) *cobra.Command {
	var pf flags.PrintFlags
	var minify, raw, flatten bool
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the kubeconfig in use (merged) or one file",
		Long: `Print the kubeconfig that is in use (the merge of its files) or the one
--kubeconfig names, with credentials hidden unless --raw. -o jsonpath picks
single values out of it.`,
		Example: `  # The kubeconfig in use
  konverge config view

  # With certificates and tokens as they are
  konverge config view --raw

  # The server address of cluster dev
  konverge config view -o jsonpath='{.clusters[?(@.name == "dev")].cluster.server}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if pf.Output == "" {
				pf.Output = "yaml"
			}
			p, err := pf.ToPrinter([]string{"go-template", "go-template-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "kyaml", "name", "template", "templatefile", "yaml"}, false, "")
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			access := g.configAccess()
			cfg, err := access.GetStartingConfig()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if minify {
				if g.Context != "" {
					cfg.CurrentContext = g.Context
				}
				if err := clientcmdapi.MinifyConfig(cfg); err != nil {
					return failOne(g.ErrOut, err)
				}
			}
			if flatten {
				if err := clientcmdapi.FlattenConfig(cfg); err != nil {
					return failOne(g.ErrOut, err)
				}
			} else if !raw {
				if err := clientcmdapi.RedactSecrets(cfg); err != nil {
					return failOne(g.ErrOut, err)
				}
				clientcmdapi.ShortenConfig(cfg)
			}
			obj, err := latest.Scheme.ConvertToVersion(cfg, latest.ExternalVersion)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			raw, ok := marshalTyped(obj)
			if !ok {
				return failOne(g.ErrOut, errors.New("cannot encode the kubeconfig"))
			}
			if err := p.PrintObject(g.Out, raw); err != nil {
				return failOne(g.ErrOut, err)
			}
			return nil
		},
	}
	pf.AddFlags(cmd, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, kyaml).")
	fs := cmd.Flags()
	fs.BoolVar(&raw, "raw", false, "Print credentials and certificate data as they are instead of hiding them")
	fs.BoolVar(&flatten, "flatten", false, "Inline the files the kubeconfig points to, so the output stands alone")
	fs.BoolVar(&minify, "minify", false, "Print only what the current context uses")
	return cmd
}

func newConfigGetContextsCmd(g *Globals) *cobra.Command {
	var output string
	var noHeaders bool
	cmd := &cobra.Command{
		Use:     "get-contexts [(-o|--output=)name)]",
		Short:   "List the contexts of the kubeconfig",
		Example: "  # List all the contexts in your kubeconfig file\n  konverge config get-contexts\n\n  # Describe one context in your kubeconfig file\n  konverge config get-contexts my-context",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if output != "" && output != "name" {
				return failOne(g.ErrOut, fmt.Errorf("--output %v is not available in kubectl config get-contexts; resetting to default output format", output))
			}
			nameOnly := output == "name"
			cfg, err := g.configAccess().GetStartingConfig()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			var errs []error
			var names []string
			if len(args) == 0 {
				for n := range cfg.Contexts {
					names = append(names, n)
				}
			} else {
				for _, n := range args {
					if _, ok := cfg.Contexts[n]; ok {
						names = append(names, n)
					} else {
						errs = append(errs, fmt.Errorf("context %v not found", n))
					}
				}
			}
			w := printer.NewTabWriter(g.Out)
			if !noHeaders && !nameOnly {
				fmt.Fprintln(w, "CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE")
			}
			sort.Strings(names)
			for _, n := range names {
				c := cfg.Contexts[n]
				if nameOnly {
					fmt.Fprintln(w, n)
					continue
				}
				cur := " "
				if cfg.CurrentContext == n {
					cur = "*"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", cur, n, c.Cluster, c.AuthInfo, c.Namespace)
			}
			_ = w.Flush()
			return reportErrors(g.ErrOut, errs)
		},
	}
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "Leave out the header row of tables and custom columns.")
	cmd.Flags().StringVarP(&output, "output", "o", "", "Print only the names (name), instead of the table.")
	return cmd
}

func newConfigCurrentContextCmd(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:     "current-context",
		Short:   "Print the name of the current context",
		Example: "  # Display the current-context\n  konverge config current-context",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			cfg, err := g.configAccess().GetStartingConfig()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if cfg.CurrentContext == "" {
				return failOne(g.ErrOut, errors.New("current-context is not set"))
			}
			fmt.Fprintln(g.Out, cfg.CurrentContext)
			return nil
		},
	}
}

func newConfigUseContextCmd(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:     "use-context CONTEXT_NAME",
		Aliases: []string{"use"},
		Short:   "Make a context the current one in the kubeconfig",
		Example: "  # Use the context for the minikube cluster\n  konverge config use-context minikube",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if len(args) != 1 {
				//lint:ignore ST1005 kubectl's message, word for word (users and scripts match it)
				return failOne(g.ErrOut, fmt.Errorf("Unexpected args: %v\nSee '%s -h' for help and examples", args, cmd.CommandPath()))
			}
			name := args[0]
			access := g.configAccess()
			cfg, err := access.GetStartingConfig()
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if strings.TrimSpace(name) == "" {
				return failOne(g.ErrOut, errors.New("empty context names are not allowed"))
			}
			if _, ok := cfg.Contexts[name]; !ok {
				return failOne(g.ErrOut, fmt.Errorf("no context exists with the name: %q", name))
			}
			cfg.CurrentContext = name
			if err := clientcmd.ModifyConfig(access, *cfg, true); err != nil {
				return failOne(g.ErrOut, err)
			}
			fmt.Fprintf(g.Out, "Switched to context %q.\n", name)
			return nil
		},
	}
}
