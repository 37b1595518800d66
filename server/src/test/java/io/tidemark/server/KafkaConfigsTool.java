package io.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.internals.Exit;

/** Kafka's {@code kafka-configs} and {@code kafka-acls} tool classes run in this JVM (their exit is caught), for tests. */
public final class KafkaConfigsTool {

  private KafkaConfigsTool() {}

  /** Runs it with {@code args}; returns what it printed (standard output and error) after checking its exit code. */
  public static String run(int expectedExit, String... args) {
    return runMain("kafka-configs", org.apache.kafka.tools.ConfigCommand::main, expectedExit, args);
  }

  /** Runs Kafka's {@code kafka-acls} tool class with {@code args}, as {@link #run}. */
  public static String acls(int expectedExit, String... args) {
    return runMain("kafka-acls", org.apache.kafka.tools.AclCommand::main, expectedExit, args);
  }

  private static synchronized String runMain(String tool, java.util.function.Consumer<String[]> main, int expectedExit,
      String... args) {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream capture = new PrintStream(printed, true, StandardCharsets.UTF_8);
    System.setOut(capture);
    System.setErr(capture);
    Integer[] code = {null};
    Exit.setExitProcedure((c, message) -> {
      if (code[0] == null) {
        code[0] = c;
      }
      throw new IllegalStateException("exit " + c);
    });
    try {
      main.accept(args);
    } catch (IllegalStateException e) {
      if (code[0] == null) {
        throw e;
      }
    } finally {
      Exit.resetExitProcedure();
      System.setOut(out);
      System.setErr(err);
    }
    String text = printed.toString(StandardCharsets.UTF_8);
    out.println(text);
    assertThat(code[0] == null ? 0 : code[0]).as(tool + " exit code, output: " + text).isEqualTo(expectedExit);
    return text;
  }
}
