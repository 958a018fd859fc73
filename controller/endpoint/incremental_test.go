package endpoint_test

import (
	"fmt"
	"testing"

	"github.com/konverge/konverge/controller"
	"github.com/konverge/konverge/controller/endpoint"
	"github.com/konverge/konverge/controller/internal/ctrltest"
)

// SyncChanged makes the writes Sync makes: seeded random edits of
// Services, pods, Endpoints and the Node, with syncs cut short by a
// budget of writes as the client rate limit cuts them, leave the same
// Endpoints and Events after every step, and a full sync finds nothing
// left to write.
func TestIncrementalSameWrites(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctrltest.SameWrites(t, seed, 50,
				func() []controller.Controller { return []controller.Controller{endpoint.Controller{}} },
				func() []controller.Controller { return []controller.Controller{endpoint.New()} },
				ctrltest.ServicesStep, ctrltest.ServicesDump)
		})
	}
}
