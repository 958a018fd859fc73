// Package quantity parses Kubernetes resource quantities ("500m", "1Gi",
// "12e6") and prints them as the API server stores them, exactly as
// k8s.io/apimachinery/pkg/api/resource.Quantity does.
//
// konverge needs this to compare a manifest with a live object: the API
// server rewrites `cpu: 0.5` as "500m" and `memory: 1536Mi` stays while
// `1.5Gi` becomes "1536Mi", and a diff that ignored this would report
// changes that are not there. Normalize turns the value of a resources
// field, a string or a number, into the string the API server returns.
//
// RoundUp rounds as Quantity.RoundUp, which the API server's defaulting
// applies to every resource list (to milli units: "0.1n" is stored "1m").
//
// It does not do other arithmetic on quantities (Add, Sub, Mul) and it
// does not know which fields of which kinds hold quantities: that is the
// schema's job.
//
// # Why not resource.Quantity itself
//
// The differential tests check every result against apimachinery's. Its
// ParseQuantity is about as fast on common input (go test ./quantity
// -bench Parse), but never finishes on some that a manifest may hold (a
// number of more than 18 digits with an exponent in the hundreds of
// thousands, a 1 followed by 100,000 zeros): the embedded cluster must
// answer whatever it is given, so this package computes those exactly,
// in time linear in their length.
//
// # Canonical form
//
// A quantity is a decimal number with an optional suffix: a binary SI one
// (Ki Mi Gi Ti Pi Ei), a decimal SI one (n u m "" k M G T P E) or a decimal
// exponent (e3, E-6). The value is rounded up, away from zero, to nano
// precision (0.1n is 1n). String writes it in the format of the suffix it
// was given with:
//
//   - DecimalSI: the largest suffix that keeps the number an integer:
//     "0.5" is "500m", "1000m" is "1", "2000000000m" is "2M";
//   - BinarySI: the largest power of 1024 that keeps it an integer:
//     "1024Mi" is "1Gi", "1.5Gi" is "1536Mi"; values below 1024, and values
//     that are not whole numbers, print as DecimalSI ("0.5Ki" is "512",
//     "1.1Ki" is "1126400m");
//   - DecimalExponent: a multiple of 3 as exponent ("15e-1" is "1500e-3").
//
// apimachinery keeps the string as it was written when it is already in
// this form by its own fast test, and that test lets a few inputs through
// that the rules above would rewrite: "+1" stays "+1", "1e3" stays "1e3"
// (not "1k": a decimal exponent never becomes an SI suffix) and "1.5e1"
// stays "1.5e1". String reproduces this, since it is what the API server
// stores and returns. It also reproduces apimachinery's treatment of
// extremes: BinarySI values are capped at 2^63-1, the exponent of "e"
// suffixes is truncated to 32 bits, and a DecimalSI value beyond the E
// suffix (10^21 and up) loses its suffix ("1000E" prints "1"). Where
// apimachinery's own arithmetic would not finish (a number of more than 18
// digits with an exponent in the millions) this package computes the exact
// result instead.
//
// # Errors
//
// Parse errors are *Error wrapping ErrFormatWrong, ErrNumeric or ErrSuffix,
// whose messages are apimachinery's.
package quantity
