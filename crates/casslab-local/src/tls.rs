//! Client security material of a local cluster. With `tls` on: one self-signed certificate
//! per cluster home, made once with the JDK's `keytool`, whose subject alternative names
//! list every node's address (drivers check the address they dialled against the
//! certificate, so one certificate that names all nodes lets one CA file verify each of
//! them). It lives in `home/tls/`: `keystore.p12` (key and certificate, PKCS12, read by every
//! node), `ca.pem` (the certificate as PEM, what clients pass as `--tls-ca`),
//! `keystore.password` (a generated local test secret, not a user's password) and
//! `addresses` (what the certificate covers, written last so that an interrupted generation
//! is redone). Also the default superuser that `auth` brings. It does not render
//! cassandra.yaml (`config_files` does) and never talks to a node.

use std::ffi::OsString;
use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::Ipv4Addr;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::jars::keytool_command;
use crate::local_error::{IoContext, LocalError};
use crate::node_process::{remove_if_present, tail_lines};

/// The superuser Cassandra creates when authentication is on (a few seconds after start).
pub const DEFAULT_SUPERUSER: &str = "cassandra";
/// Its password: Cassandra's well-known default, fine for a node on loopback.
pub const DEFAULT_SUPERUSER_PASSWORD: &str = "cassandra";

/// Alias of the key pair in the keystore.
const KEY_ALIAS: &str = "node";
const DISTINGUISHED_NAME: &str = "CN=casslab-local";
const VALIDITY_DAYS: &str = "3650";
/// Written when casslab creates `home/tls`; `down --wipe` deletes only a marked directory.
const MARKER: &str = ".casslab-tls";
/// keytool reads the keystore password from this variable (`-storepass:env`), so it never
/// appears on a command line.
const PASSWORD_ENV: &str = "CASSLAB_KEYSTORE_PASSWORD";

/// `home/tls`.
pub fn tls_dir(home: &Path) -> PathBuf {
    home.join("tls")
}

/// `home/tls/ca.pem`: the certificate clients verify the nodes with.
pub fn ca_file(home: &Path) -> PathBuf {
    tls_dir(home).join("ca.pem")
}

fn keystore_file(home: &Path) -> PathBuf {
    tls_dir(home).join("keystore.p12")
}

fn password_file(home: &Path) -> PathBuf {
    tls_dir(home).join("keystore.password")
}

fn addresses_file(home: &Path) -> PathBuf {
    tls_dir(home).join("addresses")
}

/// The keystore every node of the cluster serves TLS with.
#[derive(Clone, PartialEq, Eq)]
pub struct Keystore {
    /// PKCS12 file with the key pair and its self-signed certificate.
    pub path: PathBuf,
    pub password: String,
}

impl std::fmt::Debug for Keystore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keystore").field("path", &self.path).field("password", &"<local secret>").finish()
    }
}

/// keytool's `-ext` value naming `addresses` (and `localhost`) as the certificate's subject
/// alternative names.
pub fn san_extension(addresses: &[Ipv4Addr]) -> String {
    let names: Vec<String> = addresses.iter().map(|a| format!("ip:{a}")).chain(std::iter::once("dns:localhost".to_string())).collect();
    format!("san={}", names.join(","))
}

/// The addresses in an `addresses` file (one per line; anything else ignored).
fn parse_addresses(text: &str) -> Vec<Ipv4Addr> {
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// The keystore of the cluster under `home` if a complete one covers every address.
fn existing_keystore(home: &Path, addresses: &[Ipv4Addr]) -> Option<Keystore> {
    let covered = parse_addresses(&fs::read_to_string(addresses_file(home)).ok()?);
    let password = fs::read_to_string(password_file(home)).ok()?.trim().to_string();
    let complete = keystore_file(home).is_file() && ca_file(home).is_file() && !password.is_empty();
    (complete && addresses.iter().all(|a| covered.contains(a))).then(|| Keystore { path: keystore_file(home), password })
}

/// The cluster's keystore, made with keytool unless a complete one already covers every
/// address in `addresses` (then it is reused as is, so clients keep their CA file).
pub fn ensure_keystore(home: &Path, addresses: &[Ipv4Addr], progress: &mut dyn FnMut(&str)) -> Result<Keystore, LocalError> {
    if let Some(keystore) = existing_keystore(home, addresses) {
        return Ok(keystore);
    }
    let dir = tls_dir(home);
    fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
    let marker = dir.join(MARKER);
    if !marker.exists() {
        fs::write(&marker, "created by casslab; `casslab local down --wipe` may delete this directory\n")
            .context(|| format!("writing {}", marker.display()))?;
    }
    for file in [addresses_file(home), keystore_file(home), ca_file(home)] {
        remove_if_present(&file)?;
    }
    let password = random_password()?;
    write_private(&password_file(home), &password)?;

    let shown: Vec<String> = addresses.iter().map(Ipv4Addr::to_string).collect();
    progress(&format!("making a self-signed TLS certificate for {} with keytool ...", shown.join(", ")));
    let keystore = keystore_file(home);
    let mut genkeypair: Vec<OsString> =
        ["-genkeypair", "-keyalg", "RSA", "-keysize", "2048", "-validity", VALIDITY_DAYS, "-alias", KEY_ALIAS, "-dname", DISTINGUISHED_NAME]
            .iter()
            .map(OsString::from)
            .collect();
    genkeypair.extend(["-ext".into(), san_extension(addresses).into()]);
    genkeypair.extend(store_args(&keystore));
    genkeypair.extend(["-keypass:env".into(), PASSWORD_ENV.into()]);
    keytool(&genkeypair, &password, "make the key pair")?;

    let mut export: Vec<OsString> = ["-exportcert", "-rfc", "-alias", KEY_ALIAS].iter().map(OsString::from).collect();
    export.extend(store_args(&keystore));
    export.extend(["-file".into(), ca_file(home).into_os_string()]);
    keytool(&export, &password, "export the certificate")?;

    let covered = addresses_file(home);
    fs::write(&covered, shown.join("\n") + "\n").context(|| format!("writing {}", covered.display()))?;
    Ok(Keystore { path: keystore, password })
}

/// `-keystore <path> -storetype PKCS12 -storepass:env <var>`.
fn store_args(keystore: &Path) -> Vec<OsString> {
    vec!["-keystore".into(), keystore.as_os_str().to_os_string(), "-storetype".into(), "PKCS12".into(), "-storepass:env".into(), PASSWORD_ENV.into()]
}

/// Runs keytool with the keystore password in its environment.
fn keytool(args: &[OsString], password: &str, step: &str) -> Result<(), LocalError> {
    let keytool = keytool_command();
    let out = Command::new(&keytool).args(args).env(PASSWORD_ENV, password).output().map_err(|e| match e.kind() {
        ErrorKind::NotFound => LocalError::MissingTool {
            tool: "keytool".into(),
            hint: "it comes with the JDK that runs Cassandra (openjdk-17-jre-headless has it); set JAVA_HOME to that JDK, or start without --tls".into(),
        },
        _ => LocalError::io(format!("running {}", keytool.display()), e),
    })?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    Err(LocalError::Keytool { step: step.to_string(), status: out.status.to_string(), output_tail: tail_lines(&text, 20) })
}

/// 144 random bits as hex, from the kernel.
fn random_password() -> Result<String, LocalError> {
    let mut bytes = [0u8; 18];
    fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).context(|| "reading /dev/urandom for the keystore password".to_string())?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `text` to a new file only its owner can read.
fn write_private(path: &Path, text: &str) -> Result<(), LocalError> {
    remove_if_present(path)?;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{text}\n").as_bytes()))
        .context(|| format!("writing {}", path.display()))
}

/// Deletes `home/tls` if casslab made it; a directory without the marker is left alone
/// and reported.
pub fn wipe_tls_dir(home: &Path, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
    let dir = tls_dir(home);
    if !dir.exists() {
        return Ok(());
    }
    if !dir.join(MARKER).is_file() {
        progress(&format!("{} was not created by casslab, so it was left alone", dir.display()));
        return Ok(());
    }
    fs::remove_dir_all(&dir).context(|| format!("deleting {}", dir.display()))?;
    progress(&format!("wiped {}", dir.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn san_names_every_address_and_localhost() {
        assert_eq!(san_extension(&[Ipv4Addr::new(127, 0, 0, 55), Ipv4Addr::new(127, 0, 0, 56)]), "san=ip:127.0.0.55,ip:127.0.0.56,dns:localhost");
    }

    #[test]
    fn complete_keystore_is_reused_only_when_it_covers_the_addresses() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let a = Ipv4Addr::new(127, 0, 0, 55);
        let b = Ipv4Addr::new(127, 0, 0, 56);
        assert!(existing_keystore(home, &[a]).is_none());
        fs::create_dir_all(tls_dir(home)).unwrap();
        fs::write(keystore_file(home), b"p12").unwrap();
        fs::write(ca_file(home), b"pem").unwrap();
        write_private(&password_file(home), "s3cret").unwrap();
        // no `addresses` file yet: an interrupted generation
        assert!(existing_keystore(home, &[a]).is_none());
        fs::write(addresses_file(home), "127.0.0.55\n").unwrap();
        let ks = existing_keystore(home, &[a]).unwrap();
        assert_eq!((ks.path, ks.password.as_str()), (keystore_file(home), "s3cret"));
        assert!(existing_keystore(home, &[a, b]).is_none());
        assert!(!format!("{:?}", existing_keystore(home, &[a]).unwrap()).contains("s3cret"));
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(password_file(home)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// Runs the real keytool (the JDK this crate needs anyway).
    #[test]
    fn keytool_makes_a_certificate_naming_the_addresses_once() {
        let tmp = tempfile::tempdir().unwrap();
        let addresses = [Ipv4Addr::new(127, 0, 0, 55), Ipv4Addr::new(127, 0, 0, 56)];
        let mut lines = Vec::new();
        let ks = ensure_keystore(tmp.path(), &addresses, &mut |l| lines.push(l.to_string())).unwrap();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(ks.path.is_file());
        let pem = fs::read(ca_file(tmp.path())).unwrap();
        let cert = openssl::x509::X509::from_pem(&pem).unwrap();
        let ips: Vec<Vec<u8>> = cert.subject_alt_names().unwrap().iter().filter_map(|n| n.ipaddress().map(<[u8]>::to_vec)).collect();
        assert_eq!(ips, [vec![127, 0, 0, 55], vec![127, 0, 0, 56]]);
        // a second call (and one for fewer nodes) reuses it
        let again = ensure_keystore(tmp.path(), &addresses[..1], &mut |l| lines.push(l.to_string())).unwrap();
        assert_eq!(again, ks);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(fs::read(ca_file(tmp.path())).unwrap(), pem);
    }

    #[test]
    fn random_passwords_differ() {
        let (a, b) = (random_password().unwrap(), random_password().unwrap());
        assert_eq!(a.len(), 36);
        assert_ne!(a, b);
    }

    #[test]
    fn wipe_deletes_only_a_marked_dir() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tls_dir(tmp.path())).unwrap();
        let mut lines = Vec::new();
        wipe_tls_dir(tmp.path(), &mut |l| lines.push(l.to_string())).unwrap();
        assert!(tls_dir(tmp.path()).is_dir());
        assert!(lines[0].contains("left alone"), "{lines:?}");
        fs::write(tls_dir(tmp.path()).join(MARKER), "").unwrap();
        wipe_tls_dir(tmp.path(), &mut |_| {}).unwrap();
        assert!(!tls_dir(tmp.path()).exists());
    }
}
