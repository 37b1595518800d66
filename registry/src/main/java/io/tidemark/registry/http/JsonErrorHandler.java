package io.tidemark.registry.http;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.handler.ErrorHandler;

/**
 * Jetty's error pages as the API's JSON error bodies: the errors Jetty answers itself (a malformed
 * request line, headers over the size limit, broken chunking, an unparsable URI) and servlet-level
 * errors. The message is the status's reason phrase and nothing of the request or the exception,
 * so no stack trace or class name can reach the client. Stateless.
 */
final class JsonErrorHandler extends ErrorHandler {

  private final HttpGuard.ErrorFormat format;

  JsonErrorHandler(HttpGuard.ErrorFormat format) {
    this.format = format;
    setShowStacks(false);
    setShowServlet(false);
    setShowMessageInTitle(false);
  }

  @Override
  public void handle(String target, Request baseRequest, HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    baseRequest.setHandled(true);
    if (response.isCommitted()) {
      return;
    }
    int status = response.getStatus();
    response.resetBuffer();
    response.setContentType(format.contentType());
    byte[] body = format.body(status, reason(status)).getBytes(StandardCharsets.UTF_8);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  @Override
  public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
    fields.put(new HttpField(HttpHeader.CONTENT_TYPE, format.contentType()));
    String message = HttpGuard.publicMessage(reason, reason(status));
    return ByteBuffer.wrap(format.body(status, message).getBytes(StandardCharsets.UTF_8));
  }

  private static String reason(int status) {
    String phrase = HttpStatus.getMessage(status);
    return "HTTP " + status + (phrase == null ? "" : " " + phrase);
  }
}
