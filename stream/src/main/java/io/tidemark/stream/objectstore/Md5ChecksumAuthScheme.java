package io.tidemark.stream.objectstore;

import java.util.concurrent.CompletableFuture;

import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.scheme.AwsV4AuthScheme;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.spi.scheme.AuthScheme;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignRequest;
import software.amazon.awssdk.http.auth.spi.signer.AsyncSignedRequest;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.IdentityProvider;
import software.amazon.awssdk.identity.spi.IdentityProviders;

/**
 * SigV4 signing for stores that only understand Content-MD5: on requests that already carry a
 * {@code Content-MD5} header (added by the SDK's {@code LegacyMd5Plugin} for operations that
 * require a checksum, i.e. DeleteObjects) the signer is told not to add the CRC32 checksum the SDK
 * computes for such operations even in "when required" mode, and the
 * {@code x-amz-sdk-checksum-algorithm} header is dropped. S3Proxy, older MinIO and Ceph, and
 * several cloud look-alikes answer 501 NotImplemented or 400 to an {@code x-amz-checksum-crc32}
 * header; AWS accepts Content-MD5 alone. Used only when {@code storage.s3.checksum=when_required}.
 */
final class Md5ChecksumAuthScheme implements AuthScheme<AwsCredentialsIdentity> {

  private static final String SDK_CHECKSUM_ALGORITHM = "x-amz-sdk-checksum-algorithm";

  private final AwsV4AuthScheme delegate = AwsV4AuthScheme.create();
  private final HttpSigner<AwsCredentialsIdentity> signer = new Md5Signer(delegate.signer());

  @Override
  public String schemeId() {
    return AwsV4AuthScheme.SCHEME_ID;
  }

  @Override
  public IdentityProvider<AwsCredentialsIdentity> identityProvider(IdentityProviders providers) {
    return delegate.identityProvider(providers);
  }

  @Override
  public HttpSigner<AwsCredentialsIdentity> signer() {
    return signer;
  }

  private static boolean md5Only(SdkHttpRequest request) {
    return request.firstMatchingHeader("Content-MD5").isPresent();
  }

  private static SdkHttpRequest withoutAlgorithmHeader(SdkHttpRequest request) {
    return request.toBuilder().removeHeader(SDK_CHECKSUM_ALGORITHM).build();
  }

  private record Md5Signer(HttpSigner<AwsCredentialsIdentity> delegate) implements HttpSigner<AwsCredentialsIdentity> {
    @Override
    public SignedRequest sign(SignRequest<? extends AwsCredentialsIdentity> request) {
      if (!md5Only(request.request())) {
        return delegate.sign(request);
      }
      return delegate.sign(request.copy(b -> b
          .request(withoutAlgorithmHeader(request.request()))
          .putProperty(AwsV4FamilyHttpSigner.CHECKSUM_ALGORITHM, null)));
    }

    @Override
    public CompletableFuture<AsyncSignedRequest> signAsync(AsyncSignRequest<? extends AwsCredentialsIdentity> request) {
      if (!md5Only(request.request())) {
        return delegate.signAsync(request);
      }
      return delegate.signAsync(request.copy(b -> b
          .request(withoutAlgorithmHeader(request.request()))
          .putProperty(AwsV4FamilyHttpSigner.CHECKSUM_ALGORITHM, null)));
    }
  }
}
