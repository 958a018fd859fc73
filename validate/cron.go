package validate

import (
	"fmt"

	"github.com/robfig/cron/v3"
)

// parseCron checks a CronJob schedule with robfig/cron's ParseStandard,
// the parser kube-apiserver validates with (five fields or a descriptor,
// optionally after TZ= or CRON_TZ=). The parser panics on some malformed
// schedules ("TZ=0"); like kube-apiserver, parseCron turns the panic into
// an "invalid schedule format" error.
func parseCron(spec string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	_, err = cron.ParseStandard(spec)
	return err
}
