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

// The WeftSync types in the signatures of `SyncDriver`, `SyncClient` and `ReplicaSyncOptions`, so that an
// app embedding a daemon or talking to one needs no second import.
@_exported import struct WeftSync.AuthToken
@_exported import struct WeftSync.TokenBook
@_exported import struct WeftSync.PeerCredential
@_exported import struct WeftSync.PathPermissions
@_exported import struct WeftSync.SyncConfiguration
@_exported import enum WeftSync.SyncRole
@_exported import enum WeftSync.ClientCommand
