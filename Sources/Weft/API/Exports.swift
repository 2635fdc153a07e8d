// The WeftCore types that appear in the public API, re-exported so that `import Weft` is enough.
@_exported import enum WeftCore.Value
@_exported import enum WeftCore.Number
@_exported import struct WeftCore.Stamp
@_exported import struct WeftCore.ReplicaID
@_exported import enum WeftCore.Rejection
@_exported import enum WeftCore.Outcome
@_exported import struct WeftCore.Change
@_exported import struct WeftCore.Key
@_exported import struct WeftCore.Path
@_exported import struct WeftCore.VersionVector
@_exported import struct WeftCore.StateDigest
@_exported import struct WeftCore.FunctionRegistry
@_exported import struct WeftCore.MergeStatistics
