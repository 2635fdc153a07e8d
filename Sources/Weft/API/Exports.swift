// The WeftCore types that appear in the public API, re-exported so that `import Weft` is enough.
@_exported import enum WeftCore.Value
@_exported import enum WeftCore.Number
@_exported import struct WeftCore.Stamp
@_exported import struct WeftCore.ReplicaID
@_exported import enum WeftCore.Rejection
@_exported import enum WeftCore.Outcome
@_exported import struct WeftCore.Change
@_exported import struct WeftCore.Key
@_exported import enum WeftCore.KeyOrder
@_exported import struct WeftCore.Path
@_exported import struct WeftCore.VersionVector
@_exported import struct WeftCore.StateDigest
@_exported import struct WeftCore.FunctionRegistry
@_exported import struct WeftCore.MergeStatistics
@_exported import struct WeftCore.MergeChild
@_exported import struct WeftCore.Query
@_exported import struct WeftCore.QueryField
@_exported import enum WeftCore.QueryPredicate
@_exported import enum WeftCore.QueryComparison
@_exported import enum WeftCore.QueryOrdering
@_exported import struct WeftCore.QueryBound
@_exported import enum WeftCore.QueryLimit
@_exported import enum WeftCore.QueryError
@_exported import struct WeftCore.QueryRow
@_exported import struct WeftCore.QueryResult
@_exported import struct WeftCore.QueryChangeSet
@_exported import enum WeftCore.QueryPlan
@_exported import enum WeftCore.ValueOrder

// The store's durability level, the type of `ReplicaOptions.durability`.
@_exported import enum WeftStore.Durability

// The WeftSync types in the signatures of `SyncDriver`, `SyncClient` and `ReplicaSyncOptions`, so that an
// app embedding a daemon or talking to one needs no second import.
@_exported import struct WeftSync.AuthToken
@_exported import struct WeftSync.TokenBook
@_exported import struct WeftSync.PeerCredential
@_exported import struct WeftSync.PathPermissions
@_exported import struct WeftSync.SyncConfiguration
@_exported import enum WeftSync.SyncRole
@_exported import enum WeftSync.ClientCommand

// Combine, for the publishers and futures of the API, with the same app code on every platform: Apple's
// Combine where it exists, else OpenCombine with OpenCombineDispatch, whose conformance of `DispatchQueue`
// to `Scheduler` makes `.receive(on: DispatchQueue.main)` compile on Linux as it does on macOS.
#if canImport(Combine)
    @_exported import Combine
#else
    @_exported import OpenCombine
    @_exported import OpenCombineDispatch
#endif

// Dispatch, for the `queue:` of callbacks and subscriptions (`DispatchQueue.main`).
@_exported import Dispatch

// The logger type of `ReplicaSyncOptions.logger` and the levels of `Replica.logLevel`.
@_exported import struct Logging.Logger
