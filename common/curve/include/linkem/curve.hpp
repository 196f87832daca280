// CURVE keys in ZeroMQ certificate files (czmq's zcert format): what linkemctl keygen
// writes, what linkemd's --curve-secret / --curve-allow and the clients' --server-key /
// --secret read. Used by the client library and by the server (backend/control), so that
// neither depends on the other for it. Needs libzmq (Z85, key generation); no protocol.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace linkem::curve {

/// A key file that cannot be read or written, or holds no valid key. what() names the file.
class KeyFileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// A CURVE key pair as Z85 text (40 characters each); secret_key empty for a public key.
struct KeyPair {
    std::string public_key;
    std::string secret_key;
};

/// Whether `z85` is a 40-character Z85 key that decodes to 32 bytes.
bool valid_z85_key(const std::string& z85);

/// A new key pair (zmq_curve_keypair). Throws KeyFileError when libzmq has no CURVE.
KeyPair generate_key_pair();
/// A ZeroMQ certificate file (czmq's zcert format, as linkemd's --curve-secret and
/// --curve-allow read): "public-key = "..."" and, in a secret file, "secret-key = "..."".
std::string certificate_text(const KeyPair& keys, bool with_secret);
/// Reads a certificate file: its public key, and its secret key when it has one. Throws
/// KeyFileError naming the file and what is wrong.
KeyPair read_certificate(const std::string& path);
/// Writes DIR/NAME.key (public) and DIR/NAME.key_secret (both keys, mode 0600), creating DIR.
/// Refuses to overwrite either unless `overwrite`. Returns the two paths.
std::pair<std::string, std::string> write_certificates(const std::string& dir,
                                                       const std::string& name, const KeyPair& keys,
                                                       bool overwrite);

}  // namespace linkem::curve
