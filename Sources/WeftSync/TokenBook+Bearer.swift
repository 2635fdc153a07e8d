import WeftCore

extension TokenBook {
    /// The entry whose secret is `secret`, for transports where the secret itself is presented (HTTP's
    /// `Authorization: Bearer SECRET`, Firebase's `?auth=SECRET`): its name and credential with its kind
    /// and rules, or nil when no entry holds it or the entry is a peer's.
    ///
    /// Every entry is compared, each in constant time, so the answer's timing tells nothing about which
    /// secret came close or which names exist.
    ///
    /// ```swift
    /// if let (name, credential) = book.client(presenting: Array("alice's long secret".utf8)) { … }
    /// ```
    public func client(presenting secret: [UInt8]) -> (name: String, credential: PeerCredential)? {
        var found: (name: String, credential: PeerCredential)?
        for (name, credential) in credentials where Self.constantTimeEqual(credential.token.bytes, secret) {
            found = (name, credential)
        }
        guard let name = found?.name, var credential = found?.credential else { return nil }
        if let entry = rules.entries[name] {
            credential.kind = entry.kind
            credential.grants = rules.grants(for: name)
        }
        guard credential.kind.admits(.client) else { return nil }
        return (name, credential)
    }

    /// The credential filed under `name`, with its kind and rules, when that entry admits clients; nil when
    /// the book has no such entry (it was removed) or it is a peer's.
    ///
    /// ```swift
    /// let stillThere = book.client(named: "alice") != nil
    /// ```
    public func client(named name: String) -> PeerCredential? {
        guard var credential = credentials[name] else { return nil }
        if let entry = rules.entries[name] {
            credential.kind = entry.kind
            credential.grants = rules.grants(for: name)
        }
        return credential.kind.admits(.client) ? credential : nil
    }

    /// Compares two byte strings in time that depends on their lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        let count = max(a.count, b.count)
        for index in 0..<count {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}

extension PeerCredential {
    /// The refusal of `access` to the subtree at `path` for the client `name`, or nil when granted: the
    /// credential's prefix permissions and its name's path rules (``PathRules/check(client:path:access:)``)
    /// must both allow it, as for a client session's requests.
    public func denial(_ access: Grant, at path: Path, rules: PathRules, name: String) -> SyncError? {
        if !permissions.allows(access, subtree: path) {
            let word = access == .read ? "read" : access == .write ? "write" : "read and write"
            return SyncError(.permissionDenied, "no \(word) access to \(path)")
        }
        do {
            try rules.check(client: name, path: path, access: access)
            return nil
        } catch {
            return error
        }
    }
}
