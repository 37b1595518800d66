package io.tidemark.table.warehouse;

import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

/**
 * An output file of one of the warehouse FileIOs: {@link #create} refuses a location that exists,
 * {@link #createOrOverwrite} is the FileIO's publishing stream (whole file or nothing). Immutable.
 */
abstract class WarehouseOutputFile implements OutputFile {

  private final String location;
  private final FileIO io;

  WarehouseOutputFile(String location, FileIO io) {
    this.location = location;
    this.io = io;
  }

  @Override
  public PositionOutputStream create() {
    if (toInputFile().exists()) {
      throw new AlreadyExistsException("file already exists: %s", location);
    }
    return createOrOverwrite();
  }

  @Override
  public String location() {
    return location;
  }

  @Override
  public InputFile toInputFile() {
    return io.newInputFile(location);
  }
}
