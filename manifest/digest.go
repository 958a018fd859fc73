package manifest

import "hash/maphash"

// seed keys the digests of this process (Object.Digest).
var seed = maphash.MakeSeed()

// digestText returns the digest of a document's bytes.
func digestText(text []byte) uint64 {
	return maphash.Bytes(seed, text)
}

// itemDigest returns the digest of the item-th item of a document whose
// bytes have the digest sum (item 0: the document itself); never 0.
func itemDigest(sum uint64, item int) uint64 {
	// splitmix64's finalizer over the two.
	z := sum ^ (uint64(item)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return z
}
