package kubelet

import (
	"net/netip"
	"testing"
)

// Pod addresses stay inside PodCIDR however many pods the node runs, and
// the counter of every address reads back.
func TestPodAddressesStayInPodCIDR(t *testing.T) {
	cidr := netip.MustParsePrefix(PodCIDR)
	a := newIPAllocator(nil)
	seen := map[string]bool{}
	for i := 0; ; i++ {
		ip := a.next()
		if ip == "" {
			break
		}
		addr, err := netip.ParseAddr(ip)
		if err != nil || !cidr.Contains(addr) {
			t.Fatalf("address %d: %q is not in %s (%v)", i, ip, PodCIDR, err)
		}
		if b := addr.As4()[3]; b == 0 || b == 255 {
			t.Fatalf("address %d: %s ends in .%d", i, ip, b)
		}
		if seen[ip] {
			t.Fatalf("address %d: %s handed out twice", i, ip)
		}
		seen[ip] = true
		if n := ipCounter(ip); podIP(n) != ip {
			t.Fatalf("ipCounter(%s) = %d, which is %s", ip, n, podIP(n))
		}
	}
	if len(seen) < 250000 {
		t.Fatalf("%d addresses before the range ran out, want a quarter of a million", len(seen))
	}
	if ip := a.next(); ip != "" {
		t.Fatalf("after the range ran out: %q", ip)
	}
	for _, ip := range []string{"10.244.0.2", "10.245.1.7", "10.247.255.254"} {
		if podIP(ipCounter(ip)) != ip {
			t.Errorf("%s does not read back", ip)
		}
	}
	for _, ip := range []string{"10.248.0.1", "10.243.0.1", "172.18.0.2", "10.244.1", "10.244.1.256", "x"} {
		if n := ipCounter(ip); n != -1 {
			t.Errorf("ipCounter(%q) = %d, want -1", ip, n)
		}
	}
}
