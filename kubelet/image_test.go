package kubelet

import "testing"

func TestInvalidImage(t *testing.T) {
	for image, want := range map[string]string{
		"nginx":                             "",
		"nginx:1.16.1":                      "",
		"docker.io/library/nginx:latest":    "",
		"registry.example.com:5000/a/b:1.0": "",
		"localhost/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": "",
		"nginx 1.16.1": `Failed to apply default image tag "nginx 1.16.1": couldn't parse image name "nginx 1.16.1": invalid reference format`,
		"nginx:":       `Failed to apply default image tag "nginx:": couldn't parse image name "nginx:": invalid reference format`,
		"Nginx:1.0":    `Failed to apply default image tag "Nginx:1.0": couldn't parse image name "Nginx:1.0": invalid reference format: repository name (library/Nginx) must be lowercase`,
		"-nginx":       `Failed to apply default image tag "-nginx": couldn't parse image name "-nginx": invalid reference format`,
	} {
		if got := invalidImage(image); got != want {
			t.Errorf("%q: got %q, want %q", image, got, want)
		}
	}
}
