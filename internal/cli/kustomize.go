package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/internal/kustomize"
)

// newKustomizeCmd is kubectl kustomize: the resources a kustomization
// builds, printed as YAML, with the kustomize library.
func newKustomizeCmd(g *Globals) *cobra.Command {
	var output, restrictor string
	cmd := &cobra.Command{
		Use:   "kustomize DIR",
		Short: "Build a kustomization target from a directory or URL",
		Long: `Run kustomize on DIR (default: the current directory), which holds a
kustomization.yaml, and print the objects it builds as YAML.`,
		Example: `  # Build the current working directory
  konverge kustomize

  # Build some shared configuration directory
  konverge kustomize /home/config/production`,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			if len(args) > 1 {
				return failOne(g.ErrOut, fmt.Errorf("specify one path to kustomization.yaml"))
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			var opts kustomize.Options
			switch restrictor {
			case "LoadRestrictionsRootOnly":
			case "LoadRestrictionsNone":
				opts.LoadFilesOutsideRoot = true
			default:
				return failOne(g.ErrOut, fmt.Errorf("illegal flag value --load-restrictor %s; legal values: [LoadRestrictionsNone LoadRestrictionsRootOnly]", restrictor))
			}
			y, err := kustomize.BuildWith(dir, g.ErrOut, opts)
			if err != nil {
				return failOne(g.ErrOut, err)
			}
			if output != "" {
				if err := os.WriteFile(output, y, 0o644); err != nil {
					return failOne(g.ErrOut, err)
				}
				return nil
			}
			_, err = g.Out.Write(y)
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "If specified, write output to this path.")
	cmd.Flags().StringVar(&restrictor, "load-restrictor", "LoadRestrictionsRootOnly", "if set to 'LoadRestrictionsNone', local kustomizations may load files from outside their root. This does, however, break the relocatability of the kustomization.")
	return cmd
}
