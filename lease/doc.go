// Package lease runs a job on one process of many at a time: the holder of
// a lease in a JetStream KV bucket. It owns the lease protocol (create the
// key to take it, compare-and-set on the revision to renew it, the
// bucket's MaxAge to expire it when its holder died) and fencing (the
// revision at take-over is a token that only grows, and Fence renews the
// lease before an action with an effect outside, so a holder that lost it
// while paused does not act).
//
// It knows nothing of the hub: the hub's singletons (housekeeping, leak
// probe, MAX_DELIVERIES backstop) use it through hub.Singletons. It may
// import nothing of the module.
package lease
