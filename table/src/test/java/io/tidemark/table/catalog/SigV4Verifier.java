package io.tidemark.table.catalog;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Checks an AWS Signature Version 4 {@code Authorization} header the way AWS does: rebuilds the canonical request
 * from what arrived (method, path encoded once more, sorted query, the signed headers, the body's SHA-256), derives
 * the signing key from the known secret, and compares signatures. Written from the published algorithm, independent
 * of the AWS SDK that signed the request. Stateless.
 */
public final class SigV4Verifier {

  private static final Pattern AUTHORIZATION = Pattern.compile(
      "AWS4-HMAC-SHA256 Credential=([^/]+)/(\\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})");

  private final String accessKeyId;
  private final String secretAccessKey;
  private final String region;
  private final String service;

  public SigV4Verifier(String accessKeyId, String secretAccessKey, String region, String service) {
    this.accessKeyId = accessKeyId;
    this.secretAccessKey = secretAccessKey;
    this.region = region;
    this.service = service;
  }

  /** Null when {@code request} carries a valid signature by the known key for the region and service; else why not. */
  public String problem(CheckingEndpoint.Seen request) {
    String authorization = request.header("authorization");
    if (authorization == null) {
      return "no Authorization header";
    }
    Matcher m = AUTHORIZATION.matcher(authorization);
    if (!m.matches()) {
      return "not a SigV4 Authorization header: " + authorization;
    }
    if (!m.group(1).equals(accessKeyId) || !m.group(3).equals(region) || !m.group(4).equals(service)) {
      return "credential scope " + m.group(1) + "/" + m.group(3) + "/" + m.group(4) + " is not " + accessKeyId + "/"
          + region + "/" + service;
    }
    String amzDate = request.header("x-amz-date");
    if (amzDate == null || !amzDate.startsWith(m.group(2))) {
      return "x-amz-date " + amzDate + " does not match the scope date " + m.group(2);
    }
    List<String> signed = List.of(m.group(5).split(";"));
    if (!signed.contains("host") || !signed.contains("x-amz-date")) {
      return "host and x-amz-date must be signed: " + signed;
    }
    byte[] digest = sha256(request.body());
    String payloadHash = hex(digest);
    // Iceberg's signer declares the body's SHA-256 in hex for an empty body, in base64 otherwise
    String declared = request.header("x-amz-content-sha256");
    if (declared != null && !declared.equals(payloadHash) && !declared.equals(Base64.getEncoder().encodeToString(digest))) {
      return "x-amz-content-sha256 " + declared + " is not the body's " + payloadHash;
    }
    StringBuilder canonical = new StringBuilder()
        .append(request.method()).append('\n')
        .append(canonicalPath(request.rawPath())).append('\n')
        .append(canonicalQuery(request.rawQuery())).append('\n');
    for (String name : signed) {
      List<String> values = request.headers().get(name);
      if (values == null) {
        return "signed header " + name + " is missing";
      }
      canonical.append(name).append(':')
          .append(String.join(",", values.stream().map(v -> v.trim().replaceAll(" +", " ")).toList())).append('\n');
    }
    canonical.append('\n').append(m.group(5)).append('\n').append(payloadHash);
    String scope = m.group(2) + "/" + region + "/" + service + "/aws4_request";
    String stringToSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n"
        + hex(sha256(canonical.toString().getBytes(StandardCharsets.UTF_8)));
    String expected = signature(secretAccessKey, m.group(2), region, service, stringToSign);
    return expected.equals(m.group(6)) ? null
        : "signature " + m.group(6) + " is not " + expected + " for the canonical request\n" + canonical;
  }

  /** The SigV4 signature of {@code stringToSign}: HMAC chain date, region, service, aws4_request. */
  public static String signature(String secret, String date, String region, String service, String stringToSign) {
    byte[] key = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), date);
    key = hmac(key, region);
    key = hmac(key, service);
    key = hmac(key, "aws4_request");
    return hex(hmac(key, stringToSign));
  }

  /** Non-S3 services encode each path segment twice; the path arrived encoded once. */
  static String canonicalPath(String rawPath) {
    if (rawPath == null || rawPath.isEmpty()) {
      return "/";
    }
    StringBuilder out = new StringBuilder();
    for (String segment : rawPath.split("/", -1)) {
      if (!out.isEmpty() || rawPath.startsWith("/")) {
        out.append('/');
      }
      out.append(encode(segment));
    }
    String path = out.toString();
    return path.startsWith("//") ? path.substring(1) : path;
  }

  static String canonicalQuery(String rawQuery) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return "";
    }
    List<String[]> pairs = new ArrayList<>();
    for (String pair : rawQuery.split("&")) {
      int eq = pair.indexOf('=');
      String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      pairs.add(new String[] {encode(name), encode(value)});
    }
    pairs.sort((a, b) -> a[0].equals(b[0]) ? a[1].compareTo(b[1]) : a[0].compareTo(b[0]));
    return String.join("&", pairs.stream().map(p -> p[0] + "=" + p[1]).toList());
  }

  /** RFC 3986 encoding as SigV4 wants it: unreserved characters kept, everything else %XX upper case. */
  static String encode(String s) {
    StringBuilder out = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "-_.~".indexOf(c) >= 0) {
        out.append(c);
      } else {
        out.append('%').append(String.format(Locale.ROOT, "%02X", b & 0xff));
      }
    }
    return out.toString();
  }

  public static String hexSha256(String text) {
    return hex(sha256(text.getBytes(StandardCharsets.UTF_8)));
  }

  static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static byte[] hmac(byte[] key, String data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  /** Headers lower-cased by name, as the canonical request needs them. */
  static Map<String, List<String>> lowerCase(Map<String, List<String>> headers) {
    Map<String, List<String>> out = new java.util.TreeMap<>();
    headers.forEach((k, v) -> out.computeIfAbsent(k.toLowerCase(Locale.ROOT), x -> new ArrayList<>()).addAll(v));
    return out;
  }
}
