package io.tidemark.table.config;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.CatalogProperties;

/**
 * The Iceberg properties that reach an AWS S3 Tables table bucket ({@code table.catalog.type=s3tables}): Iceberg's
 * REST catalog client against the region's S3 Tables Iceberg REST endpoint
 * ({@code https://s3tables.<region>.amazonaws.com/iceberg}), the table bucket ARN as the warehouse, and every request
 * signed with AWS Signature Version 4 under the signing name {@code s3tables} (Iceberg's
 * {@code RESTSigV4AuthManager} from iceberg-aws). The region comes from the ARN. Anything the user sets wins: a
 * {@code table.catalog.uri} (a VPC endpoint), {@code table.catalog.rest.access-key-id} and
 * {@code table.catalog.rest.secret-access-key} (otherwise the AWS default credential chain), {@code io-impl}.
 * Stateless.
 */
final class S3TablesCatalog {

  static final String SIGNING_NAME = "s3tables";
  static final String SIGV4_AUTH_MANAGER = "org.apache.iceberg.aws.RESTSigV4AuthManager";
  /** {@code arn:<partition>:s3tables:<region>:<account>:bucket/<name>}, as AWS prints a table bucket's ARN. */
  private static final Pattern BUCKET_ARN =
      Pattern.compile("arn:(aws[a-z-]*):s3tables:([a-z0-9-]+):([0-9]{12}):bucket/([a-z0-9][a-z0-9-]{1,61}[a-z0-9])");

  private S3TablesCatalog() {}

  /** {@code given} (without the {@code table.catalog.} prefix) completed for S3 Tables; fails on a missing or bad ARN. */
  static Map<String, String> properties(Map<String, String> given) {
    String arn = given.get(CatalogProperties.WAREHOUSE_LOCATION);
    if (arn == null || arn.isBlank()) {
      throw new IllegalArgumentException("table.catalog.type=s3tables needs table.catalog.warehouse set to the table"
          + " bucket ARN (arn:aws:s3tables:<region>:<account>:bucket/<name>)");
    }
    Matcher m = BUCKET_ARN.matcher(arn.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("table.catalog.warehouse=" + arn + " is not an S3 Tables table bucket ARN"
          + " (arn:aws:s3tables:<region>:<account>:bucket/<name>)");
    }
    String region = m.group(2);
    String domain = m.group(1).equals("aws-cn") ? "amazonaws.com.cn" : "amazonaws.com";
    Map<String, String> props = new LinkedHashMap<>(given);
    props.put(CatalogProperties.WAREHOUSE_LOCATION, arn.trim());
    props.putIfAbsent(CatalogProperties.URI, "https://s3tables." + region + "." + domain + "/iceberg");
    props.putIfAbsent("rest.auth.type", "sigv4");
    props.putIfAbsent("rest.auth.sigv4.delegate-auth-type", "none");
    props.putIfAbsent("rest.signing-name", SIGNING_NAME);
    props.putIfAbsent("rest.signing-region", region);
    props.putIfAbsent("client.region", region);
    props.putIfAbsent(CatalogProperties.FILE_IO_IMPL, "org.apache.iceberg.aws.s3.S3FileIO");
    props.putIfAbsent("http-client.type", "urlconnection");
    return Map.copyOf(props);
  }
}
