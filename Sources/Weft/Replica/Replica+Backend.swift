// MARK: - ReplicaBackend

/// The API layer (`DataNode`, subscriptions, transactions) talks to a replica through this seam.
extension Replica: ReplicaBackend {}
