package org.yirage;

import org.yirage.jni.yirage_graph_format;

/** Graph file formats (docs/file-formats.md). */
public enum GraphFormat {
    /** Flatbuffers (.yrg). */
    BINARY(yirage_graph_format.YIRAGE_GRAPH_FORMAT_BINARY),
    /** The same content as JSON text. */
    JSON(yirage_graph_format.YIRAGE_GRAPH_FORMAT_JSON);

    final int code;

    GraphFormat(int code) {
        this.code = code;
    }
}
