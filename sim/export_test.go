package sim

// CheckShared turns on the cache's check that no controller changes a
// listed object.
var CheckShared = &checkShared
