package io.agentbox.mux;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;

/**
 * Config of a mux channel. Socket options that mean nothing for a mux stream (SO_KEEPALIVE,
 * TCP_NODELAY, SO_BACKLOG, ...) are accepted and ignored instead of logging "Unknown channel
 * option" as gRPC's bootstraps would otherwise cause. Supports {@link ChannelOption#ALLOW_HALF_CLOSURE}.
 */
public final class MuxStreamChannelConfig extends DefaultChannelConfig {

    private volatile boolean allowHalfClosure;

    private final Runnable onAutoReadCleared;

    public MuxStreamChannelConfig(Channel channel) {
        this(channel, () -> { });
    }

    MuxStreamChannelConfig(Channel channel, Runnable onAutoReadCleared) {
        super(channel);
        this.onAutoReadCleared = onAutoReadCleared;
    }

    @Override
    protected void autoReadCleared() {
        onAutoReadCleared.run();
    }

    public boolean isAllowHalfClosure() {
        return allowHalfClosure;
    }

    public MuxStreamChannelConfig setAllowHalfClosure(boolean allow) {
        this.allowHalfClosure = allow;
        return this;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(ChannelOption<T> option) {
        if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            return (T) Boolean.valueOf(allowHalfClosure);
        }
        return super.getOption(option);
    }

    @Override
    public <T> boolean setOption(ChannelOption<T> option, T value) {
        if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            allowHalfClosure = (Boolean) value;
            return true;
        }
        // unknown options are ignored on purpose (see class comment)
        return super.setOption(option, value) || true;
    }
}
