package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/internal/printer"
)

// subresourceFlag registers kubectl's --subresource.
func subresourceFlag(fs *pflag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "subresource", "", usage)
}

// checkSubresource refuses what kubectl refuses.
func checkSubresource(s string) error {
	switch s {
	case "", "status", "scale":
		return nil
	}
	return fmt.Errorf("invalid subresource value: %q. Must be one of [status scale]", s)
}

// subresourceClient is the cluster's access to subresources.
func subresourceClient(c cluster.Interface) (cluster.SubresourceReader, error) {
	sc, ok := c.(cluster.SubresourceReader)
	if !ok {
		return nil, fmt.Errorf("the cluster does not serve subresources")
	}
	return sc, nil
}

// getSubresources replaces objects by their subresource.
func getSubresources(ctx context.Context, c cluster.Interface, found []gotObject, sub string) ([]gotObject, []error) {
	sc, err := subresourceClient(c)
	if err != nil {
		return nil, []error{err}
	}
	var out []gotObject
	var errs []error
	for _, f := range found {
		md := printer.Map(f.obj, "metadata")
		obj, err := sc.GetSubresource(ctx, f.res.GVK, printer.Str(md, "namespace"), printer.Str(md, "name"), sub)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, gotObject{res: f.res, obj: obj, listed: f.listed})
	}
	return out, errs
}
