package org.yirage;

/** A loaded backend plugin; {@code unavailableReason} says why it has no devices ("" if it has). */
public record BackendInfo(String name, String version, String path, int numDevices,
                          String unavailableReason) {}
