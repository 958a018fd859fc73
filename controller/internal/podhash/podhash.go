// Package podhash computes the hash kube-controller-manager gives a pod
// template (controller.ComputeHash): the fnv32a hash of the template as
// k8s.io/utils/dump.ForHash prints the Go struct v1.PodTemplateSpec, with
// the collision count, safe-encoded. The DaemonSet controller names its
// ControllerRevisions and labels its pods with it (the Deployment
// controller's pod-template-hash is the same function).
//
// The hash is of the Go struct, not of its JSON: the template is decoded
// into k8s.io/api's type, as the controller's informer decodes it, and
// printed by the same code. This is the one place the controllers of the
// embedded cluster use a typed API object; no other way gives upstream's
// names.
package podhash

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/dump"

	"github.com/konverge/konverge/value"
)

const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// cache remembers the hashes of templates already computed, by their JSON
// and collision count: decoding and printing a template costs far more
// than encoding it.
var cache sync.Map

// maxCache bounds the cache; beyond it, the cache starts over.
const maxCache = 4096

var cached int64
var cacheMu sync.Mutex

// Compute returns upstream's ComputeHash of a pod template given as a JSON
// value; collisionCount nil means none.
func Compute(template map[string]any, collisionCount *int64) (string, error) {
	raw, err := value.Encode(template)
	if err != nil {
		return "", fmt.Errorf("podhash: encode the pod template: %w", err)
	}
	key := string(raw)
	if collisionCount != nil {
		key += "\x00" + strconv.FormatInt(*collisionCount, 10)
	}
	if h, ok := cache.Load(key); ok {
		return h.(string), nil
	}
	var t corev1.PodTemplateSpec
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", fmt.Errorf("podhash: decode the pod template: %w", err)
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(t))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	out := safeEncode(strconv.FormatUint(uint64(h.Sum32()), 10))
	cacheMu.Lock()
	if cached >= maxCache {
		cache.Clear()
		cached = 0
	}
	cached++
	cacheMu.Unlock()
	cache.Store(key, out)
	return out, nil
}

func safeEncode(s string) string {
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = safeAlphabet[int(s[i])%len(safeAlphabet)]
	}
	return string(b)
}
