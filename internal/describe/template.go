package describe

import "github.com/konverge/konverge/value"

// templateWithoutHash copies a pod template without its
// pod-template-hash label, as kubectl's EqualIgnoreHash compares them.
func templateWithoutHash(t map[string]any) map[string]any {
	if t == nil {
		return nil
	}
	c := value.DeepCopyObject(t)
	if md, ok := c["metadata"].(map[string]any); ok {
		if l, ok := md["labels"].(map[string]any); ok {
			delete(l, "pod-template-hash")
			if len(l) == 0 {
				delete(md, "labels")
			}
		}
	}
	return c
}

func equalJSON(a, b map[string]any) bool { return value.Equal(a, b) }
