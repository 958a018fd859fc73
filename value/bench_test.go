package value_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	kjson "k8s.io/apimachinery/pkg/util/json"

	"github.com/konverge/konverge/value"
)

// deploymentJSON is testdata/deployment.json as the API server sends it:
// compact, about 5.7 KB of a Deployment with server defaults, status and
// managedFields.
func deploymentJSON(b *testing.B) []byte {
	b.Helper()
	raw, err := os.ReadFile("testdata/deployment.json")
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkDecode(b *testing.B) {
	data := deploymentJSON(b)
	b.Run("Deployment/konverge", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := value.Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Deployment/encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Deployment/apimachinery", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]interface{}
			if err := kjson.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEncode(b *testing.B) {
	data := deploymentJSON(b)
	v, err := value.Decode(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Deployment/konverge", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := value.Encode(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Deployment/encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDeploymentTestdata checks the benchmark input: every decoder reads
// the same object from it, and Encode writes what json.Marshal does.
func TestDeploymentTestdata(t *testing.T) {
	raw, err := os.ReadFile("testdata/deployment.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := value.DecodeObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	var viaJSON, viaAPIMachinery map[string]any
	if err := json.Unmarshal(raw, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if err := kjson.Unmarshal(raw, &viaAPIMachinery); err != nil {
		t.Fatal(err)
	}
	if !value.Equal(v, viaJSON) || !identical(v, viaAPIMachinery) {
		t.Errorf("decoders disagree on testdata/deployment.json")
	}
	checkAgainstReference(t, raw)
	checkEncode(t, v)
	if v["kind"] != "Deployment" || v["spec"].(map[string]any)["replicas"] != int64(3) {
		t.Errorf("unexpected object: %v", v)
	}
}

// BenchmarkDeepCopy copies a decoded Deployment, beside decoding it again
// (the other way to get a second, independent tree of it).
func BenchmarkDeepCopy(b *testing.B) {
	data := deploymentJSON(b)
	obj, err := value.DecodeObject(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Deployment/copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			value.DeepCopyObject(obj)
		}
	})
	b.Run("Deployment/decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := value.DecodeObject(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
