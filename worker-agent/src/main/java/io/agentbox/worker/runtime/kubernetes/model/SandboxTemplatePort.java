package io.agentbox.worker.runtime.kubernetes.model;

/** One server inside a sandbox pod: name (e.g. "envd"), container port, protocol (TCP default). */
public class SandboxTemplatePort {
    private String name;
    private Integer port;
    private String protocol;

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public Integer getPort() {
        return port;
    }

    public void setPort(Integer port) {
        this.port = port;
    }

    public String getProtocol() {
        return protocol;
    }

    public void setProtocol(String protocol) {
        this.protocol = protocol;
    }
}
