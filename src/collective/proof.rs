//! Proofs of the job secret in the join handshake: HMAC-SHA256 tags (Bellare, Canetti and
//! Krawczyk 1996; RFC 2104) over everything a handshake is about.
//!
//! The secret itself never crosses the network. The root opens each handshake with a fresh random
//! nonce and the worker adds its own; a tag covers both nonces, the rank and the world, under a
//! label saying which side made it. A hello seen once therefore proves nothing in any other
//! handshake (another nonce) or job (another secret), and a worker trusts the root only after the
//! root's tag over the worker's nonce, so a process that took the root's port cannot pose as it.
//! Tags are checked with `verify_slice`, in constant time.

use super::wire::{NONCE_LEN, TAG_LEN};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

const HELLO_LABEL: &[u8] = b"optboost join v2: worker hello";
const REPLY_LABEL: &[u8] = b"optboost join v2: root reply";

/// What one handshake is about: every tag of the handshake covers all of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Transcript {
    pub root_nonce: [u8; NONCE_LEN],
    pub worker_nonce: [u8; NONCE_LEN],
    pub rank: u64,
    pub world: u64,
}

impl Transcript {
    /// `None` only if the HMAC cannot be keyed, which HMAC's any-length keys rule out; the
    /// callers then send a tag of zeros or refuse the tag they were given, never trusting it.
    fn mac(&self, secret: &[u8], label: &[u8], verdict: Option<u8>) -> Option<HmacSha256> {
        let mut mac = <HmacSha256 as KeyInit>::new_from_slice(secret).ok()?;
        mac.update(&(label.len() as u64).to_le_bytes());
        mac.update(label);
        mac.update(&self.root_nonce);
        mac.update(&self.worker_nonce);
        mac.update(&self.rank.to_le_bytes());
        mac.update(&self.world.to_le_bytes());
        if let Some(code) = verdict {
            mac.update(&[code]);
        }
        Some(mac)
    }

    /// The worker's tag: it holds the secret and means this rank, world and handshake.
    pub fn hello_tag(&self, secret: &[u8]) -> [u8; TAG_LEN] {
        tag_of(self.mac(secret, HELLO_LABEL, None))
    }

    pub fn hello_proves(&self, secret: &[u8], tag: &[u8; TAG_LEN]) -> bool {
        verified(self.mac(secret, HELLO_LABEL, None), tag)
    }

    /// The root's tag on a verdict: it holds the secret and answers this very hello.
    pub fn reply_tag(&self, secret: &[u8], verdict: u8) -> [u8; TAG_LEN] {
        tag_of(self.mac(secret, REPLY_LABEL, Some(verdict)))
    }

    pub fn reply_proves(&self, secret: &[u8], verdict: u8, tag: &[u8; TAG_LEN]) -> bool {
        verified(self.mac(secret, REPLY_LABEL, Some(verdict)), tag)
    }
}

fn tag_of(mac: Option<HmacSha256>) -> [u8; TAG_LEN] {
    let mut tag = [0u8; TAG_LEN];
    if let Some(mac) = mac {
        tag.copy_from_slice(&mac.finalize().into_bytes());
    }
    tag
}

fn verified(mac: Option<HmacSha256>, tag: &[u8; TAG_LEN]) -> bool {
    mac.is_some_and(|mac| mac.verify_slice(tag).is_ok())
}

/// Fresh bytes from the operating system's generator.
pub(super) fn nonce() -> Result<[u8; NONCE_LEN], String> {
    let mut bytes = [0u8; NONCE_LEN];
    getrandom::fill(&mut bytes)
        .map_err(|err| format!("the operating system gave no random bytes: {err}"))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"sixteen bytes at least, random in real jobs";

    fn transcript() -> Transcript {
        Transcript {
            root_nonce: [1; NONCE_LEN],
            worker_nonce: [2; NONCE_LEN],
            rank: 1,
            world: 3,
        }
    }

    #[test]
    fn a_tag_proves_only_its_own_secret_side_and_handshake() {
        let t = transcript();
        let tag = t.hello_tag(SECRET);
        assert!(t.hello_proves(SECRET, &tag));
        assert!(!t.hello_proves(b"another job's secret, as long", &tag));
        assert!(
            !t.reply_proves(SECRET, 0, &tag),
            "a hello's tag is no root's reply"
        );
        for other in [
            Transcript {
                root_nonce: [9; NONCE_LEN],
                ..t
            },
            Transcript {
                worker_nonce: [9; NONCE_LEN],
                ..t
            },
            Transcript { rank: 2, ..t },
            Transcript { world: 4, ..t },
        ] {
            assert!(!other.hello_proves(SECRET, &tag), "{other:?}");
        }
        let reply = t.reply_tag(SECRET, 7);
        assert!(t.reply_proves(SECRET, 7, &reply));
        assert!(
            !t.reply_proves(SECRET, 0, &reply),
            "a tag names its verdict"
        );
        let mut flipped = tag;
        flipped[31] ^= 1;
        assert!(!t.hello_proves(SECRET, &flipped));
    }

    #[test]
    fn nonces_differ() {
        assert_ne!(nonce().unwrap(), nonce().unwrap());
    }
}
