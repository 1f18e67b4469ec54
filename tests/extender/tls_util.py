"""A self-signed certificate for the TLS tests (not a test module): made with the ``cryptography`` package
(in the test extras) or, failing that, the ``openssl`` binary; the tests skip, saying why, without either."""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from pathlib import Path

import pytest

HOST = "extender.test"


def self_signed(directory: Path, name: str = "server") -> tuple[Path, Path]:
    """(certificate, key) PEM files for CN/SAN ``extender.test`` and 127.0.0.1, valid for a day."""
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        openssl = shutil.which("openssl")
        if openssl is None:
            pytest.skip("neither the cryptography package nor the openssl binary is available to make a certificate")
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={HOST}",
                        "-addext", f"subjectAltName=DNS:{HOST},IP:127.0.0.1"], check=True, capture_output=True)
        return cert, key
    pk = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    c = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(pk.public_key())
         .serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
         .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST),
                                                     x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                        critical=False)
         .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
         .sign(pk, hashes.SHA256()))
    cert.write_bytes(c.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(pk.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    return cert, key
