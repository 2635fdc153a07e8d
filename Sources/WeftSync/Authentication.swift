import Crypto
import WeftCore

/// A shared secret between two replicas (or a client and a daemon). It never crosses the wire: each
/// side proves it holds the token with an HMAC-SHA256 over both hello nonces and both replica ids.
///
/// ```swift
/// let token = try AuthToken(string: "correct horse battery staple")
/// ```
public struct AuthToken: Sendable {
    /// The secret bytes (swift-crypto's `SymmetricKey` is not `Sendable`, so the key is made on use).
    let bytes: [UInt8]

    var key: SymmetricKey { SymmetricKey(data: bytes) }

    /// A token from raw bytes.
    /// - Throws: ``SyncError`` with code ``SyncErrorCode/invalidConfiguration`` when shorter than
    ///   ``SyncLimits/tokenBytesMin`` or longer than ``SyncLimits/tokenBytesMax``.
    public init(bytes: some Collection<UInt8>) throws {
        guard bytes.count >= SyncLimits.tokenBytesMin, bytes.count <= SyncLimits.tokenBytesMax else {
            throw SyncError(
                .invalidConfiguration,
                "a token holds \(SyncLimits.tokenBytesMin) to \(SyncLimits.tokenBytesMax) bytes, not \(bytes.count)")
        }
        self.bytes = Array(bytes)
    }

    /// A token from the UTF-8 bytes of a string (for example read from a configuration file).
    /// - Throws: as ``init(bytes:)``.
    public init(string: String) throws {
        try self.init(bytes: Array(string.utf8))
    }
}

/// The 32 random bytes each side puts in its hello. Randomness is an input: the owner draws it.
///
/// ```swift
/// var generator = SystemRandomNumberGenerator()
/// let nonce = AuthNonce.random(using: &generator)
/// ```
public struct AuthNonce: Sendable, Hashable {
    /// The bytes, exactly ``SyncLimits/nonceBytes`` of them.
    public let bytes: [UInt8]

    /// A nonce from its bytes; nil unless there are exactly ``SyncLimits/nonceBytes``.
    public init?(bytes: [UInt8]) {
        guard bytes.count == SyncLimits.nonceBytes else { return nil }
        self.bytes = bytes
    }

    /// A nonce drawn from `generator` (the system generator in the daemon, a seeded one in the simulator).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> AuthNonce {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(SyncLimits.nonceBytes)
        while bytes.count < SyncLimits.nonceBytes {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return AuthNonce(bytes: bytes)!
    }
}

/// An HMAC-SHA256 proof that a side holds the token shared with its peer.
public struct AuthProof: Sendable, Hashable {
    /// The 32 bytes of the MAC.
    public let bytes: [UInt8]

    /// A proof from its bytes; nil unless there are exactly ``SyncLimits/proofBytes``.
    public init?(bytes: [UInt8]) {
        guard bytes.count == SyncLimits.proofBytes else { return nil }
        self.bytes = bytes
    }
}

/// The token shared with one peer or client, and what that peer may read and write.
public struct PeerCredential: Sendable {
    /// The shared secret.
    public var token: AuthToken
    /// What the peer may read and write (``PathPermissions/all`` for a full replica).
    public var permissions: PathPermissions
    /// The sessions the holder may open: a client token cannot open a peer session.
    public var kind: PeerKind
    /// The path rules of the holder's name (``PathRules``), checked besides ``permissions``; nil for none.
    public var grants: PathGrants?

    /// A credential from its token and permissions.
    public init(
        token: AuthToken, permissions: PathPermissions = .all, kind: PeerKind = .any, grants: PathGrants? = nil
    ) {
        self.token = token
        self.permissions = permissions
        self.kind = kind
        self.grants = grants
    }

    /// True when `other` holds the same secret, kind and access: a session authenticated with one goes on
    /// unchanged under the other.
    func isEquivalent(to other: PeerCredential) -> Bool {
        token.bytes == other.token.bytes && kind == other.kind && grantsSameAccess(as: other)
    }

    /// True when `other` allows the same reads and writes (its secret and kind aside).
    func grantsSameAccess(as other: PeerCredential) -> Bool {
        permissions == other.permissions && grants == other.grants
    }
}

/// The credentials of the peers and clients a replica may talk to.
///
/// A peer is looked up by the name in its hello when it sends one, otherwise by its replica id in
/// hex (``ReplicaID/description``); a peer the book does not name gets ``sharedCredential``, when there
/// is one. Both sides of a pair hold the same token, each under the other's name (or both as the
/// shared credential: any peer proving it is accepted). A replicating peer needs read access to the whole tree to be sent ops, and write access
/// over each op it sends (over the whole tree for a snapshot); a client's requests are checked path by path.
///
/// ```swift
/// var book = TokenBook(["00000000000000a1": try AuthToken(string: "peer a1's long secret")])
/// book.set(try AuthToken(string: "alice's long secret"), for: "alice",
///          permissions: PathPermissions([try Path("/users/alice"): .readWrite]))
/// ```
public struct TokenBook: Sendable {
    var credentials: [String: PeerCredential]
    /// The credential of every peer the book does not name: a secret shared by a whole mesh, or the
    /// token given for one dialled address (the peer that answers there must prove it).
    ///
    /// ```swift
    /// var book = TokenBook()
    /// book.sharedCredential = PeerCredential(token: try AuthToken(string: "the mesh's long secret"))
    /// ```
    public var sharedCredential: PeerCredential?

    /// A book from tokens keyed by name or replica id in hex, each with full permissions.
    public init(_ tokens: [String: AuthToken] = [:]) {
        credentials = tokens.mapValues { PeerCredential(token: $0) }
        sharedCredential = nil
    }

    /// True when the book names nobody and has no shared credential: it refuses every peer and client.
    public var isEmpty: Bool { credentials.isEmpty && sharedCredential == nil }

    /// Adds or replaces the token and permissions of `name`.
    public mutating func set(_ token: AuthToken, for name: String, permissions: PathPermissions = .all) {
        credentials[name] = PeerCredential(token: token, permissions: permissions)
    }

    /// The kinds and path rules of the book's names (see ``PathRules``): applied to the credential each
    /// name gets from ``credential(name:replica:)``.
    public var rules = PathRules()

    /// The names (or replica ids in hex) the book files tokens under.
    public var names: [String] { Array(credentials.keys) }

    /// The credential of a peer that introduced itself as `name` (may be empty) with id `replica`: the
    /// one filed under its name (or id), with that name's kind and rules, else ``sharedCredential``.
    public func credential(name: String, replica: ReplicaID) -> PeerCredential? {
        let key = name.isEmpty ? replica.description : name
        guard var credential = credentials[key] else { return sharedCredential }
        if let entry = rules.entries[key] {
            credential.kind = entry.kind
            credential.grants = rules.grants(for: key)
        }
        return credential
    }
}

/// Computes and checks handshake proofs.
///
/// The MAC covers a domain string, who proves (initiator or acceptor), both nonces and both replica
/// ids, so a proof can be neither replayed in another session nor reflected back to its sender.
enum Authenticator {
    static let domain = Array("weft-sync-auth-v1".utf8)

    static func proof(
        token: AuthToken, prover: SyncSide, initiator: (ReplicaID, AuthNonce), acceptor: (ReplicaID, AuthNonce)
    ) -> AuthProof {
        let message = transcript(prover: prover, initiator: initiator, acceptor: acceptor)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: token.key)
        return AuthProof(bytes: Array(mac))!
    }

    /// Checks `proof` in constant time.
    static func verify(
        _ proof: AuthProof, token: AuthToken, prover: SyncSide, initiator: (ReplicaID, AuthNonce),
        acceptor: (ReplicaID, AuthNonce)
    ) -> Bool {
        let message = transcript(prover: prover, initiator: initiator, acceptor: acceptor)
        return HMAC<SHA256>.isValidAuthenticationCode(proof.bytes, authenticating: message, using: token.key)
    }

    static func transcript(
        prover: SyncSide, initiator: (ReplicaID, AuthNonce), acceptor: (ReplicaID, AuthNonce)
    ) -> [UInt8] {
        var writer = ByteWriter(capacity: 128)
        writer.write(raw: domain)
        writer.write(byte: prover == .initiator ? 1 : 2)
        writer.write(raw: initiator.1.bytes)
        writer.write(raw: acceptor.1.bytes)
        writer.write(fixed: initiator.0.rawValue)
        writer.write(fixed: acceptor.0.rawValue)
        return writer.bytes
    }
}
