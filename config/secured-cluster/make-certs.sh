#!/usr/bin/env bash
# Makes the certificates of the secured three-node cluster (config/secured-cluster/, docs/security.md)
# with the JDK's keytool, into ./secrets (or the directory given as the first argument):
#   ca.p12 / ca.pem            a cluster CA (keep ca.p12 private; it signs the nodes' certificates)
#   node-N.p12                 node N's key and its certificate signed by the CA (SAN localhost, 127.0.0.1)
#   cluster-trust.p12          the CA certificate, the trust store of the nodes and of Java clients
# Passwords: the store passwords of the example files (changeit); choose your own for a real cluster
# and set them in the node files. For other host names, change the SAN below.
set -euo pipefail
out="${1:-secrets}"
pass="${TIDEMARK_CERT_PASSWORD:-changeit}"
keytool="${JAVA_HOME:+$JAVA_HOME/bin/}keytool"
mkdir -p "$out"
if [[ -e "$out/ca.p12" ]]; then
  echo "make-certs: $out/ca.p12 exists; remove $out first to make new certificates" >&2
  exit 1
fi
"$keytool" -genkeypair -alias ca -keyalg EC -groupname secp256r1 -dname CN=tidemark-cluster-ca -ext bc:c -validity 3650 \
  -storetype PKCS12 -keystore "$out/ca.p12" -storepass "$pass" -keypass "$pass"
"$keytool" -exportcert -rfc -alias ca -keystore "$out/ca.p12" -storepass "$pass" -file "$out/ca.pem"
"$keytool" -importcert -noprompt -alias ca -file "$out/ca.pem" -storetype PKCS12 -keystore "$out/cluster-trust.p12" \
  -storepass "$pass"
for n in 1 2 3; do
  store="$out/node-$n.p12"
  "$keytool" -genkeypair -alias "node-$n" -keyalg EC -groupname secp256r1 -dname "CN=node-$n,O=Tidemark" -validity 365 \
    -storetype PKCS12 -keystore "$store" -storepass "$pass" -keypass "$pass"
  "$keytool" -certreq -alias "node-$n" -keystore "$store" -storepass "$pass" -file "$out/node-$n.csr"
  "$keytool" -gencert -alias ca -keystore "$out/ca.p12" -storepass "$pass" -infile "$out/node-$n.csr" -rfc \
    -outfile "$out/node-$n.pem" -ext SAN=dns:localhost,ip:127.0.0.1 -ext ku:c=digitalSignature -validity 365
  "$keytool" -importcert -noprompt -alias ca -file "$out/ca.pem" -keystore "$store" -storepass "$pass"
  "$keytool" -importcert -alias "node-$n" -file "$out/node-$n.pem" -keystore "$store" -storepass "$pass"
  rm -f "$out/node-$n.csr"
done
echo "make-certs: wrote $out/ca.p12, $out/ca.pem, $out/cluster-trust.p12 and $out/node-{1,2,3}.p12"
