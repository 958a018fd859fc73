package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/konverge/konverge/internal/printer"
)

// newAPIResourcesCmd is `konverge api-resources`: the kinds the cluster
// serves, as kubectl api-resources prints them.
func newAPIResourcesCmd(g *Globals) *cobra.Command {
	var namespaced string
	var noHeaders bool
	var output string
	cmd := &cobra.Command{
		Use:   "api-resources",
		Short: "List the resource types the cluster serves",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.complete(cmd)
			ctx := cmd.Context()
			s, err := g.openResourceSession(ctx)
			if err != nil {
				return fail(g.ErrOut, 1, err)
			}
			defer s.Close(ctx)
			res := s.Mapper().Resources()
			// One row per group and resource, preferred versions first (as
			// Resources lists them), sorted by group then name.
			seen := map[string]bool{}
			type row struct{ name, short, version, group, namespaced, kind string }
			var rows []row
			for _, r := range res {
				key := r.GVK.Group + "/" + r.Plural
				if seen[key] {
					continue
				}
				seen[key] = true
				if namespaced != "" && fmt.Sprint(r.Namespaced) != namespaced {
					continue
				}
				gv := r.GVK.Version
				if r.GVK.Group != "" {
					gv = r.GVK.Group + "/" + gv
				}
				rows = append(rows, row{r.Plural, strings.Join(r.ShortNames, ","), gv, r.GVK.Group, fmt.Sprint(r.Namespaced), r.GVK.Kind})
			}
			sort.SliceStable(rows, func(i, j int) bool {
				if rows[i].group != rows[j].group {
					return rows[i].group < rows[j].group
				}
				return rows[i].name < rows[j].name
			})
			if output == "name" {
				for _, r := range rows {
					name := r.name
					if r.group != "" {
						name += "." + r.group
					}
					fmt.Fprintln(g.Out, name)
				}
				return nil
			}
			if output != "" {
				return fail(g.ErrOut, 1, fmt.Errorf("--output %s is not available in api-resources", output))
			}
			w := printer.NewTabWriter(g.Out)
			if !noHeaders {
				fmt.Fprintln(w, "NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND")
			}
			for _, r := range rows {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.name, r.short, r.version, r.namespaced, r.kind)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&namespaced, "namespaced", "", "if false, only non-namespaced resources are returned, if true only namespaced ones; all by default")
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "don't print headers")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name")
	return cmd
}
